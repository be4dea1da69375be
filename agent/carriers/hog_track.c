#include "hog_track.h"

enum hog_step hog_track_sample(struct hog_track *t, const struct hog_sample *s, const struct hog_rule *rule,
                               struct hog_ended *ended)
{
    int late = t->last_look && s->now - t->last_look > rule->max_gap_ns;
    int frozen = s->cpu_ns && s->cpu_ns == t->cpu_ns;
    t->last_look = s->now;
    t->cpu_ns = s->cpu_ns;
    int holds = s->vthread_id != 0 && s->running && !s->pinned;
    int compared = s->counting && t->counted_since; /* a count to compare with: counted since the base */
    int same_thread = t->state != HOG_NONE && t->vthread_id == s->vthread_id && (!compared || t->mounts == s->mounts);
    int same = holds && same_thread;
    if (same && s->counting && !t->counted_since) { /* counting began: this sample's count is the base */
        t->counted_since = s->now;
        t->counted_cpu_ns = s->cpu_ns;
        t->mounts = s->mounts;
    } else if (!s->counting) {
        t->counted_since = 0;
    }
    if (same && frozen) /* off every CPU since the last look: no evidence either way */
        return HOG_NOTHING;
    if (same_thread && !s->running && !s->pinned && !t->asleep_at) {
        t->asleep_at = s->now; /* a pause, unless the next sample finds it asleep too */
        return HOG_NOTHING;
    }
    if (same && late && t->state == HOG_WATCHED) { /* unseen in between: it may have mounted again */
        t->since = t->last_running = s->now;
        t->asleep_at = 0;
        t->looks = 1;
        t->counted_since = s->counting ? s->now : 0;
        t->counted_cpu_ns = s->cpu_ns;
        return HOG_NOTHING;
    }
    if (same) {
        t->asleep_at = 0;
        t->last_running = s->now;
        t->looks++;
        int verified = !rule->verify_ns ||
                       (t->counted_since && s->now - t->counted_since >= rule->verify_ns &&
                        (!s->cpu_ns || !t->counted_cpu_ns || s->cpu_ns - t->counted_cpu_ns >= rule->verify_ns / 2));
        if (t->state == HOG_WATCHED && s->now - t->since >= rule->hog_ns && t->looks >= rule->min_looks && verified) {
            t->state = HOG_RUNNING;
            return HOG_STARTS;
        }
        return HOG_NOTHING;
    }
    enum hog_step step = t->state == HOG_RUNNING ? HOG_ENDS : HOG_NOTHING;
    if (step == HOG_ENDS && ended)
        *ended = (struct hog_ended){.vthread_id = t->vthread_id,
                                    .since = t->since,
                                    .last_running = t->last_running,
                                    .end = t->asleep_at ? t->asleep_at : s->now}; /* first seen gone */
    *t = (struct hog_track){.state = holds ? HOG_WATCHED : HOG_NONE,
                            .vthread_id = holds ? s->vthread_id : 0,
                            .mounts = s->mounts,
                            .since = holds ? s->now : 0,
                            .last_running = holds ? s->now : 0,
                            .last_look = s->now,
                            .cpu_ns = s->cpu_ns,
                            .counted_since = holds && s->counting ? s->now : 0,
                            .counted_cpu_ns = s->cpu_ns,
                            .looks = holds ? 1 : 0};
    return step;
}
