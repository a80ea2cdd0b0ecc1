/**
 * The redactor's corpus: each case is a text, the secrets that must vanish from it, and the
 * ordinary words that must survive. Fake secrets only (random-looking, never real credentials).
 */
export interface RedactCase {
  name: string;
  text: string;
  /** Substrings that must not appear after redaction. */
  secrets: string[];
  /** Substrings that must still appear after redaction. */
  keep: string[];
  envFile?: boolean;
}

// Built by concatenation so the repo never holds a contiguous token that secret scanners flag.
const ANTHROPIC = "sk-" + "ant-api03-" + "Zq9XvB2mK7pL4wR8tY1uE6oI3aS5dF0gH2jK4lZ8xC1vB6nM-AbCdEfGh";
const OPENAI = "sk-" + "proj-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0";
const OPENAI_OLD = "sk-" + "Tq7Wm2Xr9Lp4Kz8Nv3Bc6Hd1Fg5Js0Ay2Ue7Io";
const GHP = "ghp" + "_" + "R4nd0mT0k3nV4lu3F0rT3st1ngOnly12345678";
const GH_PAT = "github" + "_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEF";
const AKIA = "AKIA" + "QWERTYUIOPASDFGH";
const XOXB = "xoxb" + "-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx";
const JWT =
  "eyJ" +
  "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" +
  ".eyJ" +
  "zdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0" +
  ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
const GOOGLE = "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY";
const STRIPE = "sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc";
const PEM_BODY =
  "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\nMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu";

export const REDACT_CORPUS: readonly RedactCase[] = [
  {
    name: "anthropic key in prose",
    text: `export ANTHROPIC_API_KEY=${ANTHROPIC} then run it`,
    secrets: [ANTHROPIC, "Zq9XvB2mK7pL4"],
    keep: ["then run it"],
  },
  {
    name: "openai project key",
    text: `client = OpenAI(api_key="${OPENAI}")`,
    secrets: [OPENAI],
    keep: ["client = OpenAI("],
  },
  { name: "openai legacy key", text: `key ${OPENAI_OLD} works`, secrets: [OPENAI_OLD], keep: ["works"] },
  {
    name: "github classic token",
    text: `git clone https://${GHP}@github.com/acme/repo.git`,
    secrets: [GHP],
    keep: ["github.com/acme/repo.git"],
  },
  { name: "github fine-grained pat", text: `GH_TOKEN: ${GH_PAT}`, secrets: [GH_PAT], keep: ["GH_TOKEN"] },
  {
    name: "aws access key",
    text: `aws_access_key_id = ${AKIA}\nregion = eu-west-1`,
    secrets: [AKIA],
    keep: ["region = eu-west-1"],
  },
  { name: "slack bot token", text: `slack token is ${XOXB}.`, secrets: [XOXB], keep: ["slack token is"] },
  { name: "jwt", text: `cookie: session=${JWT}; Path=/`, secrets: [JWT], keep: ["Path=/"] },
  {
    name: "google api key",
    text: `const url = "https://maps.googleapis.com/?key=${GOOGLE}"`,
    secrets: [GOOGLE],
    keep: ["maps.googleapis.com"],
  },
  { name: "stripe live key", text: `Stripe.api_key = '${STRIPE}'`, secrets: [STRIPE], keep: ["Stripe."] },
  {
    name: "bearer header",
    text: `curl -H "Authorization: Bearer abcDEF123456ghiJKL789mno" https://api.example.com`,
    secrets: ["abcDEF123456ghiJKL789mno"],
    keep: ["https://api.example.com", "Authorization"],
  },
  {
    name: "private key block",
    text: `here:\n-----BEGIN PRIVATE KEY-----\n${PEM_BODY}\n-----END PRIVATE KEY-----\ndone`,
    secrets: ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj", "MzEfYyjiWA4R4"],
    keep: ["here:", "done"],
  },
  {
    name: "rsa private key, unterminated (cut output)",
    text: `-----BEGIN RSA PRIVATE KEY-----\n${PEM_BODY}`,
    secrets: ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcw"],
    keep: [],
  },
  {
    name: "password assignment",
    text: `db.connect(host, password=hunter2hunter2, port=5432)`,
    secrets: ["hunter2hunter2"],
    keep: ["port=5432", "db.connect(host"],
  },
  {
    name: "password in json",
    text: `{"user":"bob","password":"c0rrect-h0rse-battery"}`,
    secrets: ["c0rrect-h0rse-battery"],
    keep: ['"user":"bob"'],
  },
  {
    name: "password in escaped json",
    text: `{\\"user\\":\\"bob\\",\\"password\\":\\"Tr0ub4dor&3x\\"}`,
    secrets: ["Tr0ub4dor&3x"],
    keep: ["bob"],
  },
  {
    name: "cli password flag",
    text: `mysql --password=S3cr3tPa55 -u root`,
    secrets: ["S3cr3tPa55"],
    keep: ["-u root"],
  },
  {
    name: "cli token flag with a space",
    text: `gh auth login --with-token --token Xyz987abcdefQ --hostname github.com`,
    secrets: ["Xyz987abcdefQ"],
    keep: ["--hostname github.com"],
  },
  {
    name: "client secret yaml",
    text: `oauth:\n  client_secret: 9f8e7d6c5b4a3210\n  client_id: web`,
    secrets: ["9f8e7d6c5b4a3210"],
    keep: ["client_id: web"],
  },
  {
    name: ".env style secret lines",
    text: `NODE_ENV=production\nDATABASE_URL=postgres://app:pg-pass-777@db:5432/app\nSTRIPE_SECRET_KEY=whsec_a8b7c6d5e4\nPORT=3000`,
    secrets: ["pg-pass-777", "whsec_a8b7c6d5e4"],
    keep: ["NODE_ENV=production", "PORT=3000"],
  },
  {
    name: ".env file: every value",
    text: `SESSION_COOKIE=abcdef123456\nFEATURE_FLAG=on-secret-rollout\n# comment stays`,
    secrets: ["abcdef123456", "on-secret-rollout"],
    keep: ["SESSION_COOKIE=", "# comment stays"],
    envFile: true,
  },
  {
    name: "url with credentials",
    text: `pip install --index-url https://deploy:Zx9-pass-Q2@pypi.internal/simple pkg`,
    secrets: ["Zx9-pass-Q2"],
    keep: ["pypi.internal/simple", "deploy"],
  },
  {
    name: "private tag",
    text: `note <private>my home address is 1 Main St</private> end`,
    secrets: ["1 Main St", "home address"],
    keep: ["note", "end"],
  },
  {
    name: "private tag unclosed",
    text: `ok <private>the rest is hidden`,
    secrets: ["the rest is hidden"],
    keep: ["ok"],
  },
  {
    name: "multiline private",
    text: `a <PRIVATE>line1\nline2</PRIVATE> b`,
    secrets: ["line1", "line2"],
    keep: ["a ", " b"],
  },
  // Things that look like assignments but are code, not secrets: they must survive.
  {
    name: "type annotation",
    text: `function login(password: string, token: number): boolean`,
    secrets: [],
    keep: ["password: string", "token: number"],
  },
  {
    name: "env reference",
    text: `const apiKey = process.env.OPENAI_API_KEY;`,
    secrets: [],
    keep: ["process.env.OPENAI_API_KEY"],
  },
  { name: "token counts", text: `max_tokens: 4096, input_tokens=1200`, secrets: [], keep: ["4096", "1200"] },
  {
    name: "plain prose",
    text: `We use pnpm, never npm. Tests run with vitest.`,
    secrets: [],
    keep: ["We use pnpm, never npm. Tests run with vitest."],
  },
];
