// Starts DynamoDB Local (DynamoDBLocal.jar, on the class path) bound to one address, the
// system property sundial.host (default 127.0.0.1), answering only requests that carry the
// run's secret. DynamoDB Local has no bind-address option: its server is Jetty's
// Server(port), which listens on every interface. This builds the server as the jar's own
// main does (same arguments), sets its connector's host, wraps its handler in a check of the
// header X-Sundial-Engine-Key against the environment variable SUNDIAL_ENGINE_SECRET (the
// local endpoint adds it to every request it forwards; DynamoDB Local itself accepts any
// credentials), and starts it. Compiled once by infra/emulator (dynamoLauncher) with the
// JDK's compiler.
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public class SundialDynamoDBLocal {
	static final String HEADER = "X-Sundial-Engine-Key";

	public static void main(String[] args) throws Exception {
		String host = System.getProperty("sundial.host", "127.0.0.1");
		String secret = System.getenv("SUNDIAL_ENGINE_SECRET");
		if (secret == null || secret.isEmpty()) {
			System.err.println("SundialDynamoDBLocal: SUNDIAL_ENGINE_SECRET is not set; refusing to serve without it");
			System.exit(2);
		}
		byte[] want = secret.getBytes(StandardCharsets.UTF_8);
		DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
		Field f = DynamoDBProxyServer.class.getDeclaredField("server");
		f.setAccessible(true);
		Server server = (Server) f.get(proxy);
		for (Connector c : server.getConnectors()) {
			((ServerConnector) c).setHost(host);
		}
		Handler inner = server.getHandler();
		server.setHandler(new Handler.Wrapper(inner) {
			@Override
			public boolean handle(Request request, Response response, Callback callback) throws Exception {
				String got = request.getHeaders().get(HEADER);
				if (got == null || !MessageDigest.isEqual(want, got.getBytes(StandardCharsets.UTF_8))) {
					byte[] body = ("{\"__type\":\"com.amazon.coral.service#AccessDeniedException\",\"message\":\"this engine answers only the local endpoint (missing or wrong " + HEADER + ")\"}").getBytes(StandardCharsets.UTF_8);
					response.setStatus(403);
					response.getHeaders().put("Content-Type", "application/x-amz-json-1.0");
					response.write(true, ByteBuffer.wrap(body), callback);
					return true;
				}
				return super.handle(request, response, callback);
			}
		});
		proxy.start();
	}
}
