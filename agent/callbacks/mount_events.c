#include "mount_events.h"

#include <stdatomic.h>
#include <string.h>

#include "carriers.h"

enum { MOUNT = 0, UNMOUNT = 1 };

static const char *const event_ids[2] = {"com.sun.hotspot.events.VirtualThreadMount",
                                         "com.sun.hotspot.events.VirtualThreadUnmount"};

/* Each event's index while its callback is set (-1: not), for "stop". */
static jint set_index[2] = {-1, -1};
static jvmtiEnv *count_env; /* counting on demand is ready */
static _Atomic int counting;

/* The events' indexes, looked up by name: their numbers are not part of any contract. */
static void find_events(jvmtiEnv *jvmti, jint index[2])
{
    index[MOUNT] = index[UNMOUNT] = -1;
    jint n = 0;
    jvmtiExtensionEventInfo *events = NULL;
    if ((*jvmti)->GetExtensionEvents(jvmti, &n, &events) != JVMTI_ERROR_NONE)
        return;
    for (jint i = 0; i < n; i++)
        for (int which = MOUNT; which <= UNMOUNT; which++)
            if (strcmp(events[i].id, event_ids[which]) == 0)
                index[which] = events[i].extension_event_index;
    (*jvmti)->Deallocate(jvmti, (unsigned char *)events);
}

static int set_callback(jvmtiEnv *jvmti, jint index, int which, jvmtiExtensionEvent cb)
{
    if (index < 0 || (*jvmti)->SetExtensionEventCallback(jvmti, index, cb) != JVMTI_ERROR_NONE)
        return -1;
    set_index[which] = index;
    return 0;
}

int mount_events_exact(jvmtiEnv *jvmti)
{
    jint index[2];
    find_events(jvmti, index);
    static const jvmtiExtensionEvent callbacks[2] = {(jvmtiExtensionEvent)carriers_on_mount,
                                                     (jvmtiExtensionEvent)carriers_on_unmount};
    int found = 0;
    for (int which = MOUNT; which <= UNMOUNT; which++)
        /* setting the callback is not enough: the event must also be enabled */
        found +=
            set_callback(jvmti, index[which], which, callbacks[which]) == 0 &&
            (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, (jvmtiEvent)index[which], NULL) == JVMTI_ERROR_NONE;
    return found == 2 ? 0 : -1;
}

int mount_events_count_ready(jvmtiEnv *jvmti)
{
    jint index[2];
    find_events(jvmti, index);
    if (set_callback(jvmti, index[MOUNT], MOUNT, (jvmtiExtensionEvent)carriers_on_mount_counted))
        return -1;
    count_env = jvmti;
    return 0;
}

void mount_events_count(int on)
{
    if (!count_env || set_index[MOUNT] < 0 || on == atomic_load(&counting))
        return;
    if ((*count_env)
            ->SetEventNotificationMode(count_env, on ? JVMTI_ENABLE : JVMTI_DISABLE, (jvmtiEvent)set_index[MOUNT],
                                       NULL) == JVMTI_ERROR_NONE)
        atomic_store(&counting, on);
}

int mount_events_counting(void)
{
    return atomic_load(&counting);
}

static void event_off(jvmtiEnv *jvmti, int which)
{
    if (set_index[which] < 0)
        return;
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, (jvmtiEvent)set_index[which], NULL);
    (*jvmti)->SetExtensionEventCallback(jvmti, set_index[which], NULL); /* NULL: the event is off */
    set_index[which] = -1;
}

void mount_events_exact_off(jvmtiEnv *jvmti)
{
    if (count_env) /* the mount event is counting's */
        return;
    event_off(jvmti, MOUNT);
    event_off(jvmti, UNMOUNT);
}

void mount_events_count_off(jvmtiEnv *jvmti)
{
    if (!count_env)
        return;
    count_env = NULL;
    atomic_store(&counting, 0);
    event_off(jvmti, MOUNT);
}
