/**
 * An S3-compatible state backend on a loopback port for the examples/gitops suites: moto's `moto_server` from the
 * git-ignored `.venv-s3/` (`npm run s3:install`, which `.ci/run` runs), a bucket made with a plain request, and the
 * `s3://` URL the Pulumi CLI takes for it; and, from the same server (moto serves every service on one port), a KMS
 * key as the `awskms://` URL the CLI's secrets provider takes. moto accepts any credentials; the CLI's AWS SDK wants
 * some, so the environment carries dummy ones. Without `.venv-s3/` the suites skip with the reason printed; under CI=true its
 * absence fails them, as CI installs it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";

const MOTO_SERVER = join(__dirname, "..", "..", ".venv-s3", "bin", "moto_server");

export interface S3Backend {
  /** `s3://<bucket>?endpoint=http://127.0.0.1:<port>&use_path_style=true&region=us-east-1` */
  url: string;
  /** The endpoint, `http://127.0.0.1:<port>`. */
  endpoint: string;
  bucket: string;
  /** What the CLI's AWS SDK reads: dummy credentials and the region. */
  env: NodeJS.ProcessEnv;
  /** An object of the bucket (moto serves unsigned requests), undefined when there is none. */
  get(key: string): Promise<string | undefined>;
  put(key: string, body: string): Promise<void>;
  delete(key: string): Promise<void>;
  /** The keys under `prefix`. */
  list(prefix: string): Promise<string[]>;
  /** A new KMS key, as `awskms://<key id>?region=us-east-1&endpoint=<endpoint>` (GMS_SECRETS_PROVIDER). */
  kmsKey(): Promise<string>;
  close(): Promise<void>;
}

/** Whether `file`'s S3 runs can go; undefined after printing why not (a throw under CI=true). */
export function s3BackendFor(file: string): typeof MOTO_SERVER | undefined {
  if (existsSync(MOTO_SERVER)) return MOTO_SERVER;
  const reason = `${MOTO_SERVER} is absent (npm run s3:install makes it)`;
  if (process.env.CI === "true") throw new Error(`${file}: moto's S3 server is required under CI=true: ${reason}`);
  console.log(`${file}: skipping the runs on an S3 backend: ${reason}`);
  return undefined;
}

/** A port free on loopback a moment ago: moto_server takes a port number, not 0. */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer().once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/** Starts moto_server on loopback and makes `bucket` in it (moto takes an unsigned CreateBucket). */
export async function startS3Backend(bucket = "gms-state"): Promise<S3Backend> {
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(MOTO_SERVER, ["-H", "127.0.0.1", "-p", String(port)], { stdio: ["ignore", "ignore", "pipe"] });
  let said = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (said = (said + chunk).slice(-2000)));
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  try {
    for (let attempt = 0; ; attempt++) {
      if (child.exitCode !== null) throw new Error(`moto_server exited (${child.exitCode}): ${said}`);
      const made = await fetch(`${endpoint}/${bucket}`, { method: "PUT" }).catch(() => undefined);
      if (made?.ok) break;
      if (made) throw new Error(`moto_server refused to make bucket ${bucket}: ${made.status} ${await made.text()}`);
      if (attempt >= 150) throw new Error(`moto_server did not answer on ${endpoint} within 15 s: ${said}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    await close();
    throw error;
  }
  const at = (key: string) => `${endpoint}/${bucket}/${key.split("/").map(encodeURIComponent).join("/")}`;
  // moto answers an object only to a caller with credentials (the CLI's objects are private); it does not check the
  // signature, so a request names the dummy key without signing.
  const as = { authorization: "AWS4-HMAC-SHA256 Credential=moto-test/20261129/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0" };
  const send = (url: string, init: RequestInit = {}) => fetch(url, { ...init, headers: as });
  return {
    url: `s3://${bucket}?endpoint=${endpoint}&use_path_style=true&region=us-east-1`,
    endpoint,
    bucket,
    env: { AWS_ACCESS_KEY_ID: "moto-test", AWS_SECRET_ACCESS_KEY: "moto-test", AWS_REGION: "us-east-1" },
    async get(key) {
      const response = await send(at(key));
      if (response.status === 404) return undefined;
      if (!response.ok) throw new Error(`GET ${key}: ${response.status}`);
      return response.text();
    },
    async put(key, body) {
      const response = await send(at(key), { method: "PUT", body });
      if (!response.ok) throw new Error(`PUT ${key}: ${response.status} ${await response.text()}`);
    },
    async delete(key) {
      const response = await send(at(key), { method: "DELETE" });
      if (!response.ok) throw new Error(`DELETE ${key}: ${response.status}`);
    },
    async kmsKey() {
      const response = await fetch(`${endpoint}/`, {
        method: "POST",
        headers: {
          "x-amz-target": "TrentService.CreateKey",
          "content-type": "application/x-amz-json-1.1",
          authorization: as.authorization.replace("/s3/", "/kms/"),
        },
        body: JSON.stringify({ Description: "gms state secrets" }),
      });
      if (!response.ok) throw new Error(`KMS CreateKey: ${response.status} ${await response.text()}`);
      const { KeyMetadata } = (await response.json()) as { KeyMetadata: { KeyId: string } };
      return `awskms://${KeyMetadata.KeyId}?region=us-east-1&endpoint=${endpoint}`;
    },
    async list(prefix) {
      const response = await send(`${endpoint}/${bucket}?list-type=2&prefix=${encodeURIComponent(prefix)}`);
      if (!response.ok) throw new Error(`list ${prefix}: ${response.status}`);
      return [...(await response.text()).matchAll(/<Key>([^<]*)<\/Key>/g)].map(([, key]) => key!);
    },
    close,
  };
}
