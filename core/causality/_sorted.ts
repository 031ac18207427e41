/** Sorted lists of positions, private to causality. */

/** How many entries of an ascending list are below `limit`. */
export function countBelow(list: readonly number[], limit: number): number {
  let lo = 0, hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid] < limit) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
