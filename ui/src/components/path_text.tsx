/**
 * A file path that may wrap only after a slash (never inside a name), for tables and lists
 * where a long path must fit: `<wbr>` after each `/`.
 */
import type { VNode } from "preact";

export function PathText({ path }: { path: string }): VNode {
  const parts = path.split("/");
  return (
    <code class="path" title={path}>
      {parts.map((p, i) => (i < parts.length - 1 ? [p, "/", <wbr key={i} />] : p))}
    </code>
  );
}
