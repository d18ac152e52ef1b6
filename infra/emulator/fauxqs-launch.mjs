// Starts fauxqs (installed beside this file) bound to 127.0.0.1 on $FAUXQS_PORT. fauxqs's own
// CLI listens on 0.0.0.0; Sundial's local platform keeps its queues on loopback.
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
	if (args[0] && typeof args[0] === "object" && !Array.isArray(args[0])) {
		args[0] = { ...args[0], host: "127.0.0.1" };
	}
	return listen.apply(this, args);
};

const { startFauxqs } = await import("fauxqs");
const port = Number(process.env.FAUXQS_PORT ?? "4566");
await startFauxqs({ port, logger: process.env.FAUXQS_LOGGER === "true" });
for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => process.exit(0));
