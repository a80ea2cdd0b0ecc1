/**
 * Secret redaction: every string that capture writes (event text, tool input/output, the raw source
 * record) goes through here first. Secrets become `[REDACTED:<kind>]`; text inside
 * `<private>…</private>` is removed (an unclosed `<private>` removes the rest of the string).
 *
 * Patterns are deliberately a little greedy: a redacted non-secret costs a few characters of
 * memory, a stored secret cannot be taken back.
 */

export const PRIVATE_MARKER = "[PRIVATE]";

const mark = (kind: string): string => `[REDACTED:${kind}]`;

interface TokenRule {
  kind: string;
  re: RegExp;
}

/**
 * Self-describing tokens: the whole match is the secret. A match that does not look random (no
 * digit and no mixed case: `sk-learn-compatibility-layer-module`) is a name, not a key, and is kept.
 * Stripe's `pk_` keys are publishable (meant for browsers) and are not redacted.
 */
const TOKEN_RULES: readonly TokenRule[] = [
  { kind: "anthropic_key", re: /\bsk-ant-[A-Za-z0-9_-]{16,}/g },
  { kind: "openai_key", re: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g },
  { kind: "stripe_key", re: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/g },
  { kind: "github_token", re: /\bgh[pousr]_[A-Za-z0-9]{20,}/g },
  { kind: "github_pat", re: /\bgithub_pat_[A-Za-z0-9_]{20,}/g },
  { kind: "gitlab_token", re: /\bglpat-[A-Za-z0-9_-]{20,}/g },
  { kind: "aws_access_key", re: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b/g },
  { kind: "slack_token", re: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g },
  { kind: "slack_webhook", re: /https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9/_-]+/g },
  { kind: "google_api_key", re: /\bAIza[0-9A-Za-z_-]{35}/g },
  { kind: "npm_token", re: /\bnpm_[A-Za-z0-9]{36}\b/g },
  { kind: "hf_token", re: /\bhf_[A-Za-z0-9]{30,}\b/g },
  { kind: "jwt", re: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  { kind: "sendgrid_key", re: /\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}/g },
  { kind: "pypi_token", re: /\bpypi-AgE[A-Za-z0-9_-]{40,}/g },
  { kind: "telegram_bot_token", re: /\b\d{8,10}:AA[A-Za-z0-9_-]{30,}/g },
  {
    kind: "discord_webhook",
    re: /https:\/\/(?:ptb\.|canary\.)?discord(?:app)?\.com\/api\/webhooks\/\d+\/[A-Za-z0-9_-]+/g,
  },
  { kind: "twilio_key", re: /\bSK[0-9a-f]{32}\b/g },
  { kind: "google_oauth_secret", re: /\bGOCSPX-[A-Za-z0-9_-]{20,}/g },
  { kind: "digitalocean_token", re: /\bdo[por]_v1_[a-f0-9]{64}\b/g },
  { kind: "shopify_token", re: /\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b/g },
];

/** Kinds whose prefix is common in ordinary names: their match must also look random. */
const SHAPE_CHECKED = new Set([
  "openai_key",
  "anthropic_key",
  "stripe_key",
  "github_pat",
  "gitlab_token",
  "slack_token",
  "hf_token",
  "npm_token",
]);

/** Random-looking: a digit among letters, or upper and lower case mixed (not just a capital first letter). */
export function looksRandom(v: string): boolean {
  let digit = false;
  let upper = 0;
  let lower = false;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c >= 48 && c <= 57) digit = true;
    else if (c >= 65 && c <= 90) upper += i > 0 ? 1 : 0;
    else if (c >= 97 && c <= 122) lower = true;
  }
  return (digit && (lower || upper > 0)) || (upper > 0 && lower);
}

/**
 * A token split by a line break (wrapped output, a pasted key): the prefix, at least 4 characters,
 * a newline, and a line that continues it. The whole is one secret.
 */
const SPLIT_TOKEN =
  /\b(?:sk-ant-|sk-proj-|sk-|gh[pousr]_|github_pat_|glpat-|xox[abposr]-|AKIA|ASIA|AIza|hf_|npm_|SG\.|pypi-|GOCSPX-|dop_v1_|shpat_)[A-Za-z0-9_.-]{4,}\r?\n[A-Za-z0-9_-]{6,}(?=\r?\n|$)/g;

/**
 * Base64 of a token (`echo c2stYW50… | base64 -d`, a Kubernetes secret): runs that start with the
 * encoding of a known prefix (sk-, ghp_, github_pat_, glpat-, AKIA, AIza, xox, -----BEGIN).
 */
const BASE64_TOKEN =
  /(?<![A-Za-z0-9+/])(?:c2st|Z2hw|Z2hv|Z2h1|Z2hz|Z2hy|Z2l0aHViX3BhdF|Z2xwYXQt|QUtJQ|QVNJQ|QUl6Y|eG94|LS0tLS1CRUdJT)[A-Za-z0-9+/]{12,}={0,2}/g;

/** A bare AWS secret access key: exactly 40 base64 characters, only looked for next to an access key id. */
const AWS_SECRET = /(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g;
const AWS_KEY_ID = /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/;

/** Body lines of a PEM key (64 base64 characters; 70 in OpenSSH keys), two or more in a row, or before an END line. */
const PEM_BODY_LINES = /(?:^|\n)((?:[A-Za-z0-9+/]{40,76}={0,2}\r?\n){2,}[A-Za-z0-9+/]{4,76}={0,2})(?=\r?\n|$)/g;
const PEM_TAIL = /(?:[A-Za-z0-9+/=]{16,}\r?\n)*[A-Za-z0-9+/=]{8,}\r?\n-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----/g;

/** `curl -u user:pass`, `--user user:pass`: the password after the colon. */
const CURL_USER = /(\s(?:-u|--user)[\s=]+["']?[^\s:"'@]+:)([^\s"'@]{3,})/g;
/** `mysql -pPASS`, `mysqldump -uroot -pPASS` (an attached -p value). */
const MYSQL_PASSWORD =
  /(\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump|mysqlimport|mysqlshow)\b[^\n|;&]*?\s-p)([^\s"'-][^\s"']*)/g;
/** `docker login -p PASS`, `twine upload -p …`, `sshpass -p PASS` (a detached -p value). */
const DASH_P_PASSWORD = /(\b(?:login|upload|sshpass|publish)\b[^\n|;&]*?\s-p\s+)(["']?)([^\s"']{3,})\2/g;
/** `Cookie:` / `Set-Cookie:` headers: every value of 8 characters or more. */
const COOKIE_HEADER = /\b((?:Set-)?Cookie:[ \t]*)([^\n]*)/gi;
const COOKIE_PAIR = /(\b[A-Za-z0-9_.-]+=)([^;\s"']{8,})/g;
/** Azure `AccountKey=`, `SharedAccessKey=`, `sig=` (a SAS signature). */
const AZURE_KEY = /(\b(?:AccountKey|SharedAccessKey|SharedAccessSignature|sig)=)([A-Za-z0-9%+/=]{16,})/g;
/**
 * Prose (issue 17): `the password is hunter2secret`, `passwd hunter2`, `My token is …`. The value must
 * look like a secret (a digit among letters, mixed case or a symbol), never a plain word.
 */
const PROSE_KEYWORD = /pass(?:word|wd|phrase)|secret|token/i;
const PROSE_SECRET =
  /\b(pass(?:word|wd|phrase)|pwd|secret|token)(\s+(?:is|was|=|:)\s+|\s*[:=]\s+|\s+)(["'`]?)([^\s"'`]{6,})/gi;

/** All token rules as one alternation (one pass over the string); the matching group names the kind. */
const TOKEN_ALL = new RegExp(TOKEN_RULES.map((r) => `(${r.re.source})`).join("|"), "g");

// ---- one-pass scan: which rule families can possibly match? ----------------------------------
// Regex alternations cost tens of ns per character; a hand-written scan costs a few. Most strings
// (ids, paths, code, prose) set no flag and are returned untouched after this single pass.

const F_TOKEN = 1;
const F_KEYWORD = 2;
const F_ENV = 4;
const F_BEARER = 8;
const F_URL = 16;
const F_PRIVATE_TAG = 32;
const F_PEM = 64;
/** Shapes found by a few native searches rather than the scan: commands, headers, base64, prose. */
const F_EXTRA = 128;
/** `password`, `passwd`, `pwd`, `secret` or `token` somewhere: the prose rule may apply. */
const F_PROSE = 256;

/** Case-insensitive `s.startsWith(word, i)` for a lowercase ASCII word. */
function at(s: string, i: number, word: string): boolean {
  if (i < 0 || i + word.length > s.length) return false;
  for (let j = 0; j < word.length; j++) if ((s.charCodeAt(i + j) | 32) !== word.charCodeAt(j)) return false;
  return true;
}

/** Case-sensitive `s.startsWith(word, i)` (charCode compare: startsWith with a position is slow in JSC). */
function atExact(s: string, i: number, word: string): boolean {
  if (i < 0 || i + word.length > s.length) return false;
  for (let j = 0; j < word.length; j++) if (s.charCodeAt(i + j) !== word.charCodeAt(j)) return false;
  return true;
}

function isNameChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45 || c === 46;
}

/**
 * After a keyword at `i` of length `len`: does an assignment follow (`…= value`, `…: value`, also
 * behind a closing quote, escaped or not), or is it a `--flag value`? Only then can a rule match.
 */
function assignmentAfter(s: string, i: number, len: number, colon: boolean): boolean {
  let j = i + len;
  while (j < s.length && isNameChar(s.charCodeAt(j))) j++;
  if (s.charCodeAt(j) === 92) j++; // backslash of an escaped quote
  const q = s.charCodeAt(j);
  if (q === 34 || q === 39) j++;
  while (s.charCodeAt(j) === 32 || s.charCodeAt(j) === 9) j++;
  const c = s.charCodeAt(j);
  if (c === 61 || (colon && c === 58)) return plausibleValueAt(s, j + 1);
  // `--password value`: the (dashed) name starts with a double dash
  if (!colon) return false;
  let k = i - 1;
  for (; k >= 0; k--) {
    const b = s.charCodeAt(k);
    if (!((b >= 65 && b <= 90) || (b >= 97 && b <= 122) || b === 45)) break;
  }
  return s.charCodeAt(k + 1) === 45 && s.charCodeAt(k + 2) === 45;
}

/** After `=`/`:`: a value of at least 4 characters that is not a plain number, object or array. */
function plausibleValueAt(s: string, from: number): boolean {
  let j = from;
  const n = s.length;
  while (j < n && (s.charCodeAt(j) === 32 || s.charCodeAt(j) === 9)) j++;
  if (j < n && s.charCodeAt(j) === 92) j++;
  if (j < n && (s.charCodeAt(j) === 34 || s.charCodeAt(j) === 39)) j++;
  let len = 0;
  let digits = 0;
  for (; j < s.length && len < 10; j++, len++) {
    const c = s.charCodeAt(j);
    // terminators: space, quotes, backslash, , ; ) } ] { [ newline
    if (
      c === 32 ||
      c === 34 ||
      c === 39 ||
      c === 92 ||
      c === 44 ||
      c === 59 ||
      c === 41 ||
      c === 125 ||
      c === 93 ||
      c === 123 ||
      c === 91 ||
      c === 10 ||
      c === 13 ||
      c === 9
    )
      break;
    if (c >= 48 && c <= 57) digits++;
  }
  return len >= 4 && digits < len;
}

/** Flags for a secret keyword at `i`: KEYWORD when `=`/`:` (or a `--flag`) follows, ENV when `=` follows. */
function keywordFlags(s: string, i: number, len: number): number {
  if (!assignmentAfter(s, i, len, true)) return 0;
  return assignmentAfter(s, i, len, false) ? F_KEYWORD | F_ENV : F_KEYWORD;
}

/** `scheme://user:pass@`: is there an `@` before the URL's first `/`, space or quote? */
function credentialUrlAt(s: string, i: number): boolean {
  for (let j = i + 3; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c === 64) return true; // @
    if (c === 47 || c === 32 || c === 34 || c === 39 || c === 10 || c === 92) return false;
  }
  return false;
}

/** Secret keywords starting at `i` (case-insensitive): their flags when an assignment (or a `--flag`) follows. */
function keywordAt(s: string, i: number): number {
  switch (s.charCodeAt(i) | 32) {
    case 97: // a
      return at(s, i, "auth") ? keywordFlags(s, i, 4) : 0;
    case 99: // c
      if (at(s, i, "credential")) return keywordFlags(s, i, 10);
      return at(s, i, "conn") ? keywordFlags(s, i, 4) & F_ENV : 0;
    case 100: // d
      if (at(s, i, "dsn")) return keywordFlags(s, i, 3) & F_ENV;
      return at(s, i, "database") && s.charCodeAt(i + 8) === 95 && at(s, i + 9, "url")
        ? keywordFlags(s, i, 12) & F_ENV
        : 0;
    case 107: // k
      return at(s, i, "key") ? keywordFlags(s, i, 3) : 0;
    case 112: // p
      if (at(s, i, "pass") || at(s, i, "pwd")) return keywordFlags(s, i, 3);
      return at(s, i, "private") ? keywordFlags(s, i, 7) : 0;
    case 115: // s
      return at(s, i, "secret") ? keywordFlags(s, i, 6) : 0;
    case 116: // t
      return at(s, i, "token") ? keywordFlags(s, i, 5) : 0;
    default:
      return 0;
  }
}

function keywordsIn(s: string, from: number, to: number): number {
  let f = 0;
  for (let i = from; i < to; i++) f |= keywordAt(s, i);
  return f;
}

/**
 * A keyword only counts when `=`/`:` follows its name (behind optional `\`, quote and blanks):
 * from such a `=`/`:`, walk back over those to the name and look for keywords inside it.
 */
function keywordsBefore(s: string, j: number): number {
  // an assignment counts only with a plausible value (what keywordFlags would decide for every keyword here)
  if (!plausibleValueAt(s, j + 1)) return 0;
  let p = j - 1;
  while (p >= 0 && (s.charCodeAt(p) === 32 || s.charCodeAt(p) === 9)) p--;
  if (p >= 0 && (s.charCodeAt(p) === 34 || s.charCodeAt(p) === 39)) p--;
  if (p >= 0 && s.charCodeAt(p) === 92) p--;
  const end = p + 1;
  while (p >= 0 && isNameChar(s.charCodeAt(p))) p--;
  return end - (p + 1) >= 3 ? keywordsIn(s, p + 1, end) : 0;
}

function isDashWordChar(b: number): boolean {
  return (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || b === 45;
}

/** `--password value`: keywords inside a dashed word that starts with `--` at `d`. */
function keywordsInFlag(s: string, d: number): number {
  let e = d + 2;
  while (e < s.length && isDashWordChar(s.charCodeAt(e))) e++;
  return keywordsIn(s, d + 2, e);
}

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 102);
}

/** At least `len` base64 characters from `from` (stops at the first other character). */
function base64Run(s: string, from: number, len: number): boolean {
  if (from + len > s.length) return false;
  for (let j = from; j < from + len; j++) {
    const c = s.charCodeAt(j);
    if (!((c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47)) return false;
  }
  return true;
}

/** `A` + [KSGIRN] + [IASOP] + [AD]: the head of AKIA/ASIA/AGPA/AIDA/AROA/ANPA access keys. */
function isAwsKeyHead(b: number, c: number, d: number): boolean {
  return (
    (b === 75 || b === 83 || b === 71 || b === 73 || b === 82 || b === 78) &&
    (c === 73 || c === 65 || c === 83 || c === 79 || c === 80) &&
    (d === 65 || d === 68)
  );
}

/** Characters at which some rule can be recognised (every rule has one; most text has few of them). */
const ANCHOR = new Uint8Array(128);
for (const ch of "=:-_.<AJBPTx") ANCHOR[ch.charCodeAt(0)] = 1;
// the rules of redactShapes and the newer token prefixes: token/password/secret in prose, base64
// of a token prefix, SK… (Twilio), GOCSPX-, a line of 40 base64 characters
for (const ch of "kKwWcC2QGL\nK") ANCHOR[ch.charCodeAt(0)] = 1;
ANCHOR[28] = 1; // (28 | 32) === '<': kept from the letter-case trick of the rules below

/**
 * One pass over the string, stopping only at anchor characters: `=`/`:` (keyword assignments, URLs
 * with credentials), `--` (flags), `_`/`-`/`.`/`J`/`A`/`x` (the tail or head of a token prefix such
 * as `ghp_`, `sk-`, `hooks.slack`, `eyJ`, `AKIA`, `xox`), `B`/`T` (Bearer/Basic/Token), `P` (PEM), `<`.
 */
function scan(s: string): number {
  let f = 0;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || ANCHOR[c] === 0) continue;
    // in-bounds neighbours only (an out-of-range charCodeAt is NaN and slows the whole loop down)
    const prev = i > 0 ? s.charCodeAt(i - 1) : 0;
    const next = i + 1 < n ? s.charCodeAt(i + 1) : 0;
    switch (c) {
      case 61: // =
        f |= keywordsBefore(s, i);
        if (
          at(s, i - 10, "accountkey") ||
          at(s, i - 3, "sig") ||
          at(s, i - 15, "sharedaccesskey") ||
          at(s, i - 21, "sharedaccesssignature")
        )
          f |= F_EXTRA;
        break;
      case 58: // :
        if (next === 47 && i + 2 < n && s.charCodeAt(i + 2) === 47 && credentialUrlAt(s, i)) f |= F_URL;
        f |= keywordsBefore(s, i);
        if (at(s, i - 6, "cookie")) f |= F_EXTRA;
        else if (next === 65 && prev >= 48 && prev <= 57 && i + 2 < n && s.charCodeAt(i + 2) === 65) f |= F_TOKEN; // <digits>:AA (Telegram)
        break;
      case 45: // -
        if (next === 45 && !isDashWordChar(prev)) {
          f |= keywordsInFlag(s, i);
          if (atExact(s, i + 2, "user")) f |= F_EXTRA;
        }
        if ((next === 117 || next === 112) && (prev === 32 || prev === 9)) f |= F_EXTRA; // -u, -p
        if (prev === 107 && i >= 2 && s.charCodeAt(i - 2) === 115)
          f |= F_TOKEN; // sk-
        else if (prev === 116 && atExact(s, i - 5, "glpat-")) f |= F_TOKEN;
        else if (prev === 105 && atExact(s, i - 4, "pypi-")) f |= F_TOKEN;
        else if (prev === 45 && atExact(s, i - 1, "-----END")) f |= F_EXTRA;
        break;
      case 107: // k: token
      case 75:
        if (at(s, i - 2, "token")) f |= F_PROSE;
        if (c === 75 && prev === 83 && isHex(next)) f |= F_TOKEN; // SK + hex (Twilio)
        break;
      case 119: // w: password, passwd, pwd
      case 87:
        if (at(s, i - 4, "passw") || at(s, i - 1, "pwd")) f |= F_PROSE;
        break;
      case 99: // c: secret
      case 67:
        if (at(s, i - 2, "secret")) f |= F_PROSE;
        break;
      case 50: // 2: base64 of sk- (c2st), gh*_ (Z2h), github_pat_ (Z2l0), glpat- (Z2xw)
        if ((prev === 99 && atExact(s, i - 1, "c2st")) || (prev === 90 && (next === 104 || next === 108))) f |= F_EXTRA;
        break;
      case 81: // Q: base64 of AKIA, ASIA, AIza
        if (atExact(s, i, "QUtJQ") || atExact(s, i, "QVNJQ") || atExact(s, i, "QUl6Y")) f |= F_EXTRA;
        break;
      case 71: // G: base64 of xox (eG94), GOCSPX-
        if ((prev === 101 && atExact(s, i - 1, "eG94")) || atExact(s, i, "GOCSPX-"))
          f |= prev === 101 ? F_EXTRA : F_TOKEN;
        break;
      case 76: // L: base64 of -----BEGIN
        if (atExact(s, i, "LS0tLS1")) f |= F_EXTRA;
        break;
      case 10: // a line that starts with 40 base64 characters (a PEM body line, a bare key)
        if (base64Run(s, i + 1, 40)) f |= F_EXTRA;
        break;
      case 95: // _
        if (prev === 49 && atExact(s, i - 3, "_v1_") && i >= 6 && atExact(s, i - 6, "do"))
          f |= F_TOKEN; // dop_v1_
        else if (i >= 5 && atExact(s, i - 5, "shp"))
          f |= F_TOKEN; // shpat_, shpss_, …
        else if (prev === 107) {
          const a = i >= 2 ? s.charCodeAt(i - 2) : 0; // pk_, rk_, sk_
          if (a === 112 || a === 114 || a === 115) f |= F_TOKEN;
        } else if (
          i >= 3 &&
          s.charCodeAt(i - 3) === 103 &&
          s.charCodeAt(i - 2) === 104 &&
          (prev === 112 || prev === 111 || prev === 117 || prev === 115 || prev === 114)
        ) {
          f |= F_TOKEN; // gh[pousr]_
        } else if (
          (prev === 98 && atExact(s, i - 6, "github_pat_")) ||
          (prev === 102 && atExact(s, i - 2, "hf_")) ||
          (prev === 109 && atExact(s, i - 3, "npm_"))
        ) {
          f |= F_TOKEN;
        }
        break;
      case 46: // .
        if (prev === 115 && atExact(s, i - 5, "hooks.slack")) f |= F_TOKEN;
        else if (prev === 71 && i >= 2 && s.charCodeAt(i - 2) === 83)
          f |= F_TOKEN; // SG.
        else if (prev === 100 && atExact(s, i - 7, "discord")) f |= F_TOKEN;
        break;
      case 74: // J
        if (prev === 121 && i >= 2 && s.charCodeAt(i - 2) === 101) f |= F_TOKEN; // eyJ
        break;
      case 65: // A
        if (at(s, i, "auth")) break;
        if (i + 3 < n && isAwsKeyHead(next, s.charCodeAt(i + 2), s.charCodeAt(i + 3))) f |= F_TOKEN;
        else if (atExact(s, i, "AIza")) f |= F_TOKEN;
        break;
      case 66: // B
        if (atExact(s, i, "Bearer") || atExact(s, i, "Basic")) f |= F_BEARER;
        break;
      case 84: // T
        if (at(s, i, "token")) f |= F_BEARER;
        break;
      case 80: // P
        if (atExact(s, i, "PRIVATE KEY")) f |= F_PEM;
        break;
      case 120: // x
        if (atExact(s, i, "xox")) f |= F_TOKEN;
        break;
      case 60: // <
      case 28:
        if (at(s, i + 1, "private")) f |= F_PRIVATE_TAG;
        break;
    }
  }
  return f;
}

const PRIVATE_KEY_BLOCK =
  /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----[\s\S]*?(?:-----END \1PRIVATE KEY\2-----|$)/g;
const BEARER = /\b(Bearer|Token|Basic)(\s+)([A-Za-z0-9._~+/=-]{12,})/g;

/**
 * A credential after `Bearer`/`Token`/`Basic`, not a word ("Basic authentication", "Token
 * verification"): random-looking, or for Basic, base64 of `user:password`.
 */
function bearerShape(word: string, value: string): boolean {
  if (word === "Basic") {
    const decoded = Buffer.from(value, "base64").toString("latin1");
    if (/^[\x20-\x7e]+:[\x20-\x7e]+$/.test(decoded)) return true;
  }
  return looksRandom(value) && !isCodeReference(value);
}
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/:@'"]*):([^\s/@'"]+)@/gi;
/** `password=…`, `api_key: "…"`, `"client_secret": "…"`, `--password …` (also inside JSON-escaped text). */
const ASSIGNMENT =
  /((?:--[A-Za-z-]*(?:password|passwd|token|secret|api-key|apikey)(?:=|\s+))|(?:(?:\\?["'])?\b[A-Za-z0-9_.-]*(?:passw(?:or)?d|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credentials?|auth[_-]?key)(?![A-Za-z0-9])(?:\\?["'])?\s*[=:]\s*))(\\"(?:[^"\\\n]|\\[^"])*\\"|"[^"\n]*"|'[^'\n]*'|[^\s"',;)}\]\\-][^\s"',;)}\]\\]*)/gi;
/** `.env` lines whose key names a secret: `export STRIPE_SECRET=…` (also as Claude Code's Read shows them: `     1→KEY=…`, `1\tKEY=…`). */
const ENV_SECRET_LINE =
  /^((?:[ \t]*\d+(?:→|\t)|[ \t]*)(?:export\s+)?[A-Za-z_][A-Za-z0-9_]*(?:KEY|SECRET|TOKEN|PASSWORD|PASSWD|PASS|PWD|CREDENTIALS?|AUTH|PRIVATE|DSN|DATABASE_URL|CONN(?:ECTION)?_STRING)[A-Za-z0-9_]*\s*=\s*)(.+)$/gim;
/** Every `KEY=VALUE` line (used for the content of `.env` files, where every value is a secret), line-numbered or not. */
const ENV_ANY_LINE = /^((?:[ \t]*\d+(?:→|\t)|[ \t]*)(?:export\s+)?[A-Za-z_][A-Za-z0-9_.]*\s*=\s*)(\S.*)$/gm;
const PRIVATE_TAG = /<private>[\s\S]*?(?:<\/private>|$)/gi;

/** Values that are code or references, not secrets (`password: string`, `token = os.environ[...]`). */
const NOT_A_SECRET =
  /^(?:\$|\{|process\.env|os\.environ|os\.getenv|env\.|getenv|ENV\[|\{\{|\$\{|<|\[REDACTED|\*+$|x+$|(?:self|this|config|settings|args|opts|options|req|params|props|ctx)\.|[A-Za-z_]+\(|=|:|(?:string|number|boolean|null|undefined|none|true|false|str|int|bool|any|optional|required|secret|password|token|redacted)(?![A-Za-z0-9_]))/i;

/** Placeholders in examples and templates (`your-key-here`, `changeme`, `xxx`). */
const PLACEHOLDER =
  /^(?:your[-_ ]|my[-_]|changeme|change[-_]me|example|dummy|placeholder|todo|fixme|tbd|\.\.\.|…)|[-_](?:here|example|placeholder)$/i;

function isPlausibleSecret(value: string): boolean {
  const bare = value.replace(/^\\?["']|\\?["']$/g, "");
  if (bare.length < 4 || /^\d{1,9}$/.test(bare)) return false;
  if (bare.length < 6 && /^[a-z]+$/.test(bare)) return false; // `credentials:edit`: a word, not a password
  return !NOT_A_SECRET.test(bare) && !PLACEHOLDER.test(bare) && !isCodeReference(bare);
}

export interface RedactOptions {
  /** Treat every `KEY=VALUE` line as a secret (content of a `.env` file). */
  envFile?: boolean;
  /** Strings already known to scan clean (`secretFlags` 0): returned as they are, unless `envFile`. */
  clean?: { has(s: string): boolean };
}

/**
 * Cheap gate: the rule families that can match in `text` (0: nothing to redact — most strings,
 * which then skip the redaction regexes entirely).
 */
export function secretFlags(text: string): number {
  return text.length < 8 ? 0 : scan(text);
}

/** Redact one string. Returns the same string when nothing matched. */
export function redactText(input: string, opts: RedactOptions = {}): string {
  let s = input;
  if (s.length < 8 || (!opts.envFile && opts.clean?.has(s))) return s;
  const f = scan(s);
  if (f === 0 && !opts.envFile) return s;
  if (f & F_PRIVATE_TAG) s = s.replace(PRIVATE_TAG, PRIVATE_MARKER);
  if (f & F_PEM) s = s.replace(PRIVATE_KEY_BLOCK, mark("private_key"));
  if (f & F_EXTRA) s = redactShapes(s);
  if (f & (F_TOKEN | F_EXTRA))
    s = s.replace(SPLIT_TOKEN, (m) => (looksRandom(m.slice(m.lastIndexOf("\n") + 1)) ? mark("token") : m));
  if (f & F_TOKEN) {
    if (AWS_KEY_ID.test(s)) s = s.replace(AWS_SECRET, (m) => (awsSecretShape(m) ? mark("aws_secret_key") : m));
    s = s.replace(TOKEN_ALL, tokenReplacer);
  }
  if (f & F_URL)
    s = s.replace(URL_CREDENTIALS, (_m, scheme: string, user: string) => `${scheme}${user}:${mark("url_password")}@`);
  if (f & F_BEARER)
    s = s.replace(BEARER, (m, word: string, space: string, value: string) =>
      bearerShape(word, value) ? `${word}${space}${mark("bearer")}` : m,
    );
  if (opts.envFile) {
    if (s.includes("=")) s = s.replace(ENV_ANY_LINE, (_m, head: string) => `${head}${mark("env_value")}`);
  } else if (f & F_ENV && s.includes("=")) {
    s = s.replace(ENV_SECRET_LINE, (m, head: string, value: string) =>
      isPlausibleSecret(value) && !looksLikeCode(value) ? `${head}${mark("env_value")}` : m,
    );
  }
  if (f & F_KEYWORD)
    s = s.replace(ASSIGNMENT, (m, head: string, value: string) =>
      isPlausibleSecret(value) && !isIdentifier(value) ? `${head}${mark("password")}` : m,
    );
  if (f & F_PROSE) s = s.replace(PROSE_SECRET, proseReplacer);
  return s;
}

/** The rules gated by F_EXTRA: PEM fragments, base64 tokens, credentials in commands and headers. */
function redactShapes(input: string): string {
  let s = input;
  if (s.includes("-----END"))
    s = s.replace(PEM_TAIL, (m) => `${mark("private_key")}\n${m.slice(m.indexOf("-----END"))}`);
  if (s.includes("\n"))
    s = s.replace(PEM_BODY_LINES, (m, body: string) => (pemBodyShape(body) ? m.replace(body, mark("private_key")) : m));
  s = s.replace(BASE64_TOKEN, (m) => (looksRandom(m) ? mark("base64_secret") : m));
  s = s.replace(CURL_USER, (m, head: string, value: string) =>
    isPlausibleSecret(value) ? `${head}${mark("password")}` : m,
  );
  s = s.replace(MYSQL_PASSWORD, (_m, head: string) => `${head}${mark("password")}`);
  s = s.replace(DASH_P_PASSWORD, (m, head: string, q: string, value: string) =>
    isPlausibleSecret(value) ? `${head}${q}${mark("password")}${q}` : m,
  );
  s = s.replace(
    COOKIE_HEADER,
    (_m, head: string, rest: string) =>
      head +
      rest.replace(COOKIE_PAIR, (p, name: string, value: string) =>
        looksRandom(value) ? `${name}${mark("cookie")}` : p,
      ),
  );
  s = s.replace(AZURE_KEY, (_m, head: string) => `${head}${mark("azure_key")}`);
  return s;
}

/** 40 base64 characters with digits and both cases (a git SHA is hex: never both cases). */
function awsSecretShape(v: string): boolean {
  return /[0-9]/.test(v) && /[A-Z]/.test(v) && /[a-z]/.test(v);
}

/** Base64 lines of a key body: mixed case and digits on every full line. */
function pemBodyShape(body: string): boolean {
  const lines = body.split(/\r?\n/).filter((l) => l.length >= 40);
  return lines.length >= 2 && lines.every((l) => /[0-9]/.test(l) && /[A-Z]/.test(l) && /[a-z]/.test(l));
}

/** Words that follow `password`/`token` in prose and are never the value. */
const PROSE_WORDS =
  /^(?:required|missing|invalid|expired|incorrect|wrong|correct|valid|empty|set|unset|stored|saved|hashed|encrypted|optional|needed|present|absent|rotated|revoked|generated|provided|refreshed|changed|reset|field|manager|store|bucket|count|limit)$/i;

function proseReplacer(m: string, word: string, sep: string, q: string, raw: string): string {
  const value = raw.replace(/[.,;:!?)\]}]+$/, "");
  // a digit or a symbol among letters: `hunter2secret`, `Tr0ub4dor&3`; never a word, a type name or a link
  const shaped = /[A-Za-z]/.test(value) && /[0-9!@#$%^&*+=~?]/.test(value) && /^[A-Za-z0-9]/.test(value);
  if (value.length < 6 || PROSE_WORDS.test(value) || !shaped || !isPlausibleSecret(value) || isCodeReference(value))
    return m;
  return `${word}${sep}${q}${mark("password")}${raw.slice(value.length)}`;
}

/**
 * An unquoted name written the way code names things (`csrfToken`, `API_KEY`, `SecretStr`,
 * `output_tokens`): a reference to a value, not the value. Quoted strings are literals and stay suspect.
 */
function isIdentifier(value: string): boolean {
  const v = value.replace(/[,;`)\]}]+$/, "");
  return /^[A-Za-z_][A-Za-z_]*$/.test(v) && (v.includes("_") || /[a-z][A-Z]/.test(v));
}

/** A `.env`-looking line that is code: an unquoted value with blanks (`a = b + c`) or a name. */
function looksLikeCode(value: string): boolean {
  const v = value.trim();
  return (!/^["']/.test(v) && /\s/.test(v)) || isIdentifier(v);
}

/** `response.data.accessToken`, `request.headers().get(`: code that names a value, not the value. */
function isCodeReference(v: string): boolean {
  return /^[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*)+(?:\(.*)?$/.test(v) || /^[A-Za-z_$][\w$]*\(/.test(v);
}

function tokenReplacer(match: string, ...groups: unknown[]): string {
  for (let i = 0; i < TOKEN_RULES.length; i++) {
    if (groups[i] === undefined) continue;
    const kind = TOKEN_RULES[i]!.kind;
    if (SHAPE_CHECKED.has(kind) && !looksRandom(match)) return match;
    return mark(kind);
  }
  return match.length > 0 ? mark("token") : match;
}

/** Does this path name a dotenv file (`.env`, `.env.local`, `prod.env`)? */
export function isEnvFilePath(path: string): boolean {
  return /(^|[\\/])\.env(\.[A-Za-z0-9_-]+)?$|\.env$/.test(path) && !/\.env\.(example|sample|template|dist)$/.test(path);
}

/** Shell words: what separates them (blanks, quotes, operators, `=` of `--env-file=…`). */
const SHELL_SEPARATORS = /[\s|;&<>()`'"=]+/;
/** Commands that print the environment itself (`env`, `printenv`, `export -p`): KEY=value lines too. */
const PRINTS_ENVIRONMENT = /(?:^|[|;&(]\s*)(?:printenv\b|env\s*(?:$|[|;&)])|export\s+-p\b)/;

/**
 * Does a shell command print a dotenv file or the environment (`cat .env`, `grep KEY .env.local`,
 * `source prod.env && env`, `printenv`)? Then every KEY=value line of its output is a secret,
 * whatever the key is called.
 */
export function commandReadsEnvFile(command: string): boolean {
  if (!command.includes("env")) return false;
  if (PRINTS_ENVIRONMENT.test(command)) return true;
  for (const word of command.split(SHELL_SEPARATORS)) if (word.includes(".env") && isEnvFilePath(word)) return true;
  return false;
}

/** Redact every string inside a JSON-like value (objects, arrays), returning a new value. */
export function redactDeep<T>(value: T, opts: RedactOptions = {}): T {
  return walk(value, opts) as T;
}

/** Object keys that name a secret (`password`, `db_password`, `apiKey`, `client_secret`, `session_token`…). */
const SECRET_KEY =
  /(?:passw(?:or)?d|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credentials?|auth[_-]?key)$/i;

export function isSecretKey(key: string): boolean {
  // every alternative ends in d, t, n, y, l or s: most keys are ruled out without the regex
  const last = key.charCodeAt(key.length - 1) | 32;
  if (last !== 100 && last !== 116 && last !== 110 && last !== 121 && last !== 108 && last !== 115) return false;
  return SECRET_KEY.test(key);
}

function walk(value: unknown, opts: RedactOptions): unknown {
  if (typeof value === "string") return redactText(value, opts);
  if (Array.isArray(value)) return value.map((v) => walk(v, opts));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      // `{"password": "hunter2"}` as a parsed object: the key says what the value is.
      out[k] = typeof v === "string" && isSecretKey(k) && isPlausibleSecret(v) ? mark("password") : walk(v, opts);
    }
    return out;
  }
  return value;
}

/** The values the prose rule alone would redact in `text` (for measuring it on real transcripts). */
export function proseSecretValues(text: string): string[] {
  const out: string[] = [];
  if (!PROSE_KEYWORD.test(text)) return out;
  text.replace(PROSE_SECRET, (m: string, word: string, sep: string, q: string, raw: string) => {
    if (proseReplacer(m, word, sep, q, raw) !== m) out.push(m);
    return m;
  });
  return out;
}
