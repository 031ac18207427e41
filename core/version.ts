/** Chronicle's version, printed by `--version` and written into recordings. */
export const VERSION = "0.1.0";
