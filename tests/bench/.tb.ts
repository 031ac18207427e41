import { ChronicleStore } from "../../core/store/mod.ts";
import { createPackFiles, packDir } from "../../runtime/pack_files.ts";
import { runImport } from "../../cli/import.ts";
const [home, data, source = "claude-code"] = Deno.args;
await Deno.mkdir(data, { recursive: true });
const store = ChronicleStore.open(`${data}/chronicle.db`, {
  packs: createPackFiles(packDir(data)),
});
function threads() {
  const out: Record<string, number> = {};
  for (const e of Deno.readDirSync("/proc/self/task")) {
    try {
      const comm = Deno.readTextFileSync(`/proc/self/task/${e.name}/comm`).trim();
      const st = Deno.readTextFileSync(`/proc/self/task/${e.name}/stat`).split(") ")[1].split(" ");
      out[`${comm}:${e.name}`] = (Number(st[11]) + Number(st[12])) / 100;
    } catch { /* gone */ }
  }
  return out;
}
let snap: Record<string, number> = {};
const maxes: Record<string, number> = {};
const tick = setInterval(() => {
  if (browsable) return;
  for (const [k, v] of Object.entries(threads())) maxes[k] = Math.max(maxes[k] ?? 0, v);
}, 50);
const t0 = performance.now();
let browsable = 0;
await runImport(store, {
  stdout: () => {},
  stderr: (t: string) => {
    if (t.includes("indexed for search") && !browsable) {
      snap = threads();
      browsable = performance.now() - t0;
      if (Deno.env.get("STOP")) {
        const busy = Object.fromEntries(Object.entries(snap).filter(([, v]) => v > 0.05));
        console.log(
          JSON.stringify({
            browsable: Math.round(browsable),
            hwm: Deno.readTextFileSync("/proc/self/status").match(/VmHWM:\s+(\d+)/)![1],
            busy,
          }),
        );
        Deno.exit(0);
      }
    }
  },
  stdin: () => Promise.resolve(new Uint8Array()),
  env: { HOME: home },
  cwd: Deno.cwd(),
  isTerminal: false,
}, { tempRoot: `${data}/tmp`, sources: [source], progress: true });
clearInterval(tick);
for (const [k, v] of Object.entries(snap)) maxes[k] = Math.max(maxes[k] ?? 0, v);
const busy = Object.fromEntries(Object.entries(maxes).filter(([, v]) => v > 0.05));
console.log(
  JSON.stringify({
    browsable: Math.round(browsable),
    end: Math.round(performance.now() - t0),
    busy,
  }),
);
