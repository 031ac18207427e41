/**
 * @module
 * The browser UI's entry: renders the app into #app. Built by ui/build.ts into ui/dist.
 */
import { render } from "preact";
import { App } from "./components/app.tsx";

render(<App />, document.getElementById("app")!);
