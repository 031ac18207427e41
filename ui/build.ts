/**
 * @module
 * Builds the browser UI into ui/dist: the app bundled by `deno bundle` (esbuild inside Deno,
 * resolving the same pinned npm: imports and lockfile as the rest of the project), plus
 * index.html, the stylesheet and the icon. Run with `deno task build:ui`.
 */
const here = import.meta.dirname!;
const dist = `${here}/dist`;

export async function buildUi(options: { minify?: boolean } = {}): Promise<void> {
  await Deno.mkdir(`${dist}/assets`, { recursive: true });
  const args = [
    "bundle",
    "--quiet",
    "--platform",
    "browser",
    "--format",
    "esm",
    "-o",
    `${dist}/assets/app.js`,
    `${here}/src/main.tsx`,
  ];
  if (options.minify !== false) args.splice(1, 0, "--minify");
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: `${here}/..`,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`Cannot bundle the UI: ${new TextDecoder().decode(out.stderr).trim()}`);
  }
  await Deno.copyFile(`${here}/index.html`, `${dist}/index.html`);
  await Deno.copyFile(`${here}/src/app.css`, `${dist}/assets/app.css`);
  await Deno.copyFile(`${here}/src/live.css`, `${dist}/assets/live.css`);
  await Deno.copyFile(`${here}/static/favicon.svg`, `${dist}/assets/favicon.svg`);
}

if (import.meta.main) {
  const started = performance.now();
  await buildUi({ minify: !Deno.args.includes("--dev") });
  const size = (await Deno.stat(`${dist}/assets/app.js`)).size;
  console.log(
    `ui/dist built in ${Math.round(performance.now() - started)} ms (app.js ${
      Math.round(size / 1024)
    } KiB)`,
  );
}
