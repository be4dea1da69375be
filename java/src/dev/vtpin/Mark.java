package dev.vtpin;

/**
 * A point in the agent's time, from {@link Vtpin#mark()}: the pins since it are those that
 * started at or after it.
 *
 * @param nanos the agent's monotonic clock (CLOCK_MONOTONIC) at the mark
 * @param evictions how many ended pins the agent had dropped for room by then
 */
public record Mark(long nanos, long evictions) {}
