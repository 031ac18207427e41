/**
 * Gemini's `Content` parts, as Gemini CLI and its fork Qwen Code both write them into their
 * logs: `functionCall` parts (a call), `functionResponse` parts (its result: `{output}` or
 * `{error}`), and text parts marked `thought: true` (the model's thinking). Read once here for
 * both importers.
 */
import { isObj, type Json, nonEmpty } from "../_import_kit.ts";

/** One `functionResponse` part's result, as far as importers need it. */
export interface FunctionResponse {
  id?: string;
  name?: string;
  output?: string;
  /** The response carries an `error` (a failed call). */
  error: boolean;
  /** The error's text, when it is one. */
  errorText?: string;
}

/** The `functionResponse` parts of a list of parts (others are skipped). */
export function responsesOf(parts: unknown): FunctionResponse[] {
  if (!Array.isArray(parts)) return [];
  const out: FunctionResponse[] = [];
  for (const part of parts) {
    if (!isObj(part) || !isObj(part.functionResponse)) continue;
    const fr = part.functionResponse;
    const r = isObj(fr.response) ? fr.response : {};
    const err = r.error;
    out.push({
      id: nonEmpty(fr.id),
      name: nonEmpty(fr.name),
      output: typeof r.output === "string" ? r.output : undefined,
      error: err !== undefined && err !== null,
      errorText: typeof err === "string"
        ? err
        : isObj(err) && typeof err.message === "string"
        ? err.message
        : undefined,
    });
  }
  return out;
}

/** The `functionCall` parts of a list of parts, as `{id, name, args}` (the recorded form). */
export function callsOfParts(parts: unknown): Json[] {
  if (!Array.isArray(parts)) return [];
  return parts.flatMap((p) =>
    isObj(p) && isObj(p.functionCall)
      ? [{ id: p.functionCall.id, name: p.functionCall.name, args: p.functionCall.args }]
      : []
  );
}

/** True for a part holding the model's thinking (`{text, thought: true}`). */
export function isThoughtPart(part: unknown): part is Json & { text: string } {
  return isObj(part) && part.thought === true && typeof part.text === "string";
}
