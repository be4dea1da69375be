package dev.vtpin;

import java.util.List;

/**
 * The pins since a mark, from {@link Vtpin#pinsSince(Mark)}.
 *
 * @param list the pins that started at or after the mark, ended ones first, then the ones in
 *     progress
 * @param dropped ended pins the agent no longer kept when asked (it keeps the last 4096, 8 MiB at
 *     most): when not 0, the list may miss some
 */
public record Pins(List<Pin> list, long dropped) {}
