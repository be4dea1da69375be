/* What the agent's Agent_OnAttach returns besides JNI_OK (0) and JNI_ERR
 * (-1), so that `vtpin attach` can say why a load did nothing: HotSpot's
 * reply to JVMTI.agent_load ends with "return code: N". Shared by the agent
 * and the CLI; no code. */
#ifndef VTPIN_COMMON_AGENT_CODES_H
#define VTPIN_COMMON_AGENT_CODES_H

/* A load while the agent is running: nothing changed; 'stop' first. */
#define VTPIN_LOAD_ALREADY_RUNNING 100
/* A load after 'stop' that asks for options fixed at the first load:
 * VTPIN_LOAD_FIXED plus the VTPIN_FIXED_* bits of those it asked to change.
 * Nothing was started. */
#define VTPIN_LOAD_FIXED 200
#define VTPIN_FIXED_CARRIERS 1u  /* carriers= */
#define VTPIN_FIXED_RING 2u      /* ring= */
#define VTPIN_FIXED_OCCUPANCY 4u /* occupancy=exact, or away from it */
#define VTPIN_FIXED_ALL 7u

#endif
