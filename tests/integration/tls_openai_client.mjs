// The official `openai` npm client over HTTPS against the daemon's self-signed certificate:
// lists the models at KIMI_BASE_URL with KIMI_API_KEY. Whether Node trusts the certificate is
// decided by NODE_EXTRA_CA_CERTS, set (or not) by tls_openai_client.py. Prints the outcome;
// exits 0 when the list came back, 1 when the request failed.
import OpenAI from "openai";

const client = new OpenAI({ baseURL: process.env.KIMI_BASE_URL, apiKey: process.env.KIMI_API_KEY, maxRetries: 0,
                            timeout: 30_000 });
try {
  const page = await client.models.list();
  console.log("listed " + page.data.length + " models over https");
  process.exit(0);
} catch (err) {
  // The reason sits at the end of the cause chain (APIConnectionError -> fetch -> TLS socket).
  const reasons = [];
  for (let e = err; e; e = e.cause) reasons.push(e.code || e.message);
  console.log("failed: " + reasons.join(" <- "));
  process.exit(1);
}
