// Starts fauxqs (installed beside this file) bound to 127.0.0.1 on $FAUXQS_PORT, answering
// only requests that carry the run's secret. fauxqs's own CLI listens on 0.0.0.0; Sundial's
// local platform keeps its queues on loopback. fauxqs accepts any credentials: every request
// without the header X-Sundial-Engine-Key equal to $SUNDIAL_ENGINE_SECRET (the local endpoint
// adds it to what it forwards) is refused with 403 before fauxqs sees it.
import crypto from "node:crypto";
import http from "node:http";
import net from "node:net";

const secret = Buffer.from(process.env.SUNDIAL_ENGINE_SECRET ?? "");
if (secret.length === 0) {
	console.error("fauxqs-launch: SUNDIAL_ENGINE_SECRET is not set; refusing to serve without it");
	process.exit(2);
}
delete process.env.SUNDIAL_ENGINE_SECRET;

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
	if (args[0] && typeof args[0] === "object" && !Array.isArray(args[0])) {
		args[0] = { ...args[0], host: "127.0.0.1" };
	}
	return listen.apply(this, args);
};

const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, ...args) {
	if (event === "request") {
		const [req, res] = args;
		const got = Buffer.from(String(req.headers["x-sundial-engine-key"] ?? ""));
		if (got.length !== secret.length || !crypto.timingSafeEqual(got, secret)) {
			req.resume();
			res.writeHead(403, { "Content-Type": "application/x-amz-json-1.0" });
			res.end(JSON.stringify({ __type: "com.amazonaws.sqs#AccessDenied",
				message: "this engine answers only the local endpoint (missing or wrong X-Sundial-Engine-Key)" }));
			return true;
		}
	}
	return emit.call(this, event, ...args);
};

const { startFauxqs } = await import("fauxqs");
const port = Number(process.env.FAUXQS_PORT ?? "4566");
await startFauxqs({ port, logger: process.env.FAUXQS_LOGGER === "true" });
for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => process.exit(0));
