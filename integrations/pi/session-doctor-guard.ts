/**
 * session-doctor guard for pi: keep media a provider rejects out of the session.
 *
 * Before pi's `read` tool runs, the file is judged by `session-doctor guard`:
 * a file that does not decode is blocked with a reason the model sees, an image
 * over the provider's limits is swapped for a fitted copy. After any tool, an
 * image in its result is judged the same way (a broken one is replaced by a
 * note, an oversized one by its fitted copy). A guard that cannot run lets the
 * call through: it must never be the reason a session stops.
 *
 * Installed by `session-doctor guard install pi`, which fills in SESSION_DOCTOR.
 */

import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

const SESSION_DOCTOR = process.env.SESSION_DOCTOR_BIN || "__SESSION_DOCTOR__";
const PROVIDER = process.env.SESSION_DOCTOR_PROVIDER || "__PROVIDER__";

type Verdict = { decision: "pass" | "deny" | "fitted"; reason: string; fitted: string | null };

function judge(file: string, base64 = false): Verdict | undefined {
	let out: string;
	try {
		// pi's read sends a file as an image by its first bytes; the rest it reads as text.
		const args = ["guard", "--json", "--provider", PROVIDER, ...(base64 ? ["--base64"] : ["--for", "pi"]), file];
		out = execFileSync(SESSION_DOCTOR, args, {
			encoding: "utf8",
			timeout: 30000,
		});
	} catch (err: any) {
		// Exit 1 means "deny" and still prints the verdict; anything else fails open.
		if (err?.status !== 1 || typeof err.stdout !== "string") return undefined;
		out = err.stdout;
	}
	try {
		return (JSON.parse(out) as Verdict[])[0];
	} catch {
		return undefined;
	}
}

const EXT: Record<string, string> = { "image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp" };

export default function (pi: ExtensionAPI) {
	pi.on("tool_call", async (event, ctx) => {
		if (event.toolName !== "read") return undefined;
		const path = (event.input as { path?: string }).path;
		if (typeof path !== "string") return undefined;
		const file = isAbsolute(path) ? path : resolve(ctx.cwd, path);
		const verdict = judge(file);
		if (verdict?.decision === "deny") return { block: true, reason: verdict.reason };
		if (verdict?.decision === "fitted" && verdict.fitted) (event.input as { path: string }).path = verdict.fitted;
		return undefined;
	});

	pi.on("tool_result", async (event) => {
		const content = event.content as Array<{ type: string; data?: string; mimeType?: string; text?: string }>;
		if (!Array.isArray(content) || !content.some((c) => c.type === "image")) return undefined;
		const dir = mkdtempSync(join(tmpdir(), "sd-guard-"));
		try {
			let changed = false;
			const out = content.map((c, i) => {
				if (c.type !== "image" || typeof c.data !== "string") return c;
				const file = join(dir, `image-${i}.${EXT[c.mimeType ?? ""] ?? "bin"}`);
				// The text as the tool gave it: Node's base64 decoder is lenient (it stops at the
				// first "="), session-doctor's is as strict as the providers.
				writeFileSync(file, c.data);
				const verdict = judge(file, true);
				if (verdict?.decision === "deny") {
					changed = true;
					return { type: "text", text: `[Image omitted by session-doctor guard: ${verdict.reason}]` };
				}
				if (verdict?.decision === "fitted" && verdict.fitted) {
					changed = true;
					const mimeType = verdict.fitted.endsWith(".jpg") ? "image/jpeg" : "image/png";
					return { type: "image", data: readFileSync(verdict.fitted).toString("base64"), mimeType };
				}
				return c;
			});
			return changed ? { content: out } : undefined;
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});
}
