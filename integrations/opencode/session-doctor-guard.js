/**
 * session-doctor guard for opencode: keep media a provider rejects out of the session.
 *
 * Before opencode's `read` tool runs, the file is judged by `session-doctor guard`:
 * a file that does not decode is refused (the thrown error is what the model
 * sees as the tool's result), an image over the provider's limits is swapped for
 * a fitted copy. A guard that cannot run lets the call through: it must never
 * be the reason a session stops.
 *
 * Installed by `session-doctor guard install opencode`, which fills in SESSION_DOCTOR.
 */

import { execFileSync } from "node:child_process"
import { isAbsolute, resolve } from "node:path"

const SESSION_DOCTOR = process.env.SESSION_DOCTOR_BIN || "__SESSION_DOCTOR__"
const PROVIDER = process.env.SESSION_DOCTOR_PROVIDER || "__PROVIDER__"

function judge(file) {
  let out
  try {
    // --for opencode: what opencode's read takes as text (an SVG) is not judged as an image.
    out = execFileSync(SESSION_DOCTOR, ["guard", "--json", "--provider", PROVIDER, "--for", "opencode", file], { encoding: "utf8", timeout: 30000 })
  } catch (err) {
    // Exit 1 means "deny" and still prints the verdict; anything else fails open.
    if (err?.status !== 1 || typeof err.stdout !== "string") return undefined
    out = err.stdout
  }
  try {
    return JSON.parse(out)[0]
  } catch {
    return undefined
  }
}

export const SessionDoctorGuard = async ({ directory }) => ({
  "tool.execute.before": async (input, output) => {
    if (input.tool !== "read") return
    const path = output.args?.filePath
    if (typeof path !== "string") return
    const verdict = judge(isAbsolute(path) ? path : resolve(directory, path))
    if (verdict?.decision === "deny") throw new Error(verdict.reason)
    if (verdict?.decision === "fitted" && verdict.fitted) output.args.filePath = verdict.fitted
  },
})
