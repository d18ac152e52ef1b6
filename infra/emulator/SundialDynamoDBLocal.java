// Starts DynamoDB Local (DynamoDBLocal.jar, on the class path) bound to one address, the
// system property sundial.host (default 127.0.0.1). DynamoDB Local has no bind-address
// option: its server is Jetty's Server(port), which listens on every interface. This builds
// the server as the jar's own main does (same arguments), sets its connector's host, and
// starts it. Compiled once by infra/emulator (dynamoLauncher) with the JDK's compiler.
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public class SundialDynamoDBLocal {
	public static void main(String[] args) throws Exception {
		String host = System.getProperty("sundial.host", "127.0.0.1");
		DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
		Field f = DynamoDBProxyServer.class.getDeclaredField("server");
		f.setAccessible(true);
		Server server = (Server) f.get(proxy);
		for (Connector c : server.getConnectors()) {
			((ServerConnector) c).setHost(host);
		}
		proxy.start();
	}
}
