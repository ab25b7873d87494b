import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { loadKeyring, MessageSealCodec, type MessageKeyring } from '../keys/message-seal';

/**
 * Optional encryption of every payload the service sends to Temporal (workflow inputs, update
 * arguments and results, activity and local-activity results, query answers): AES-256-GCM with a
 * key only the service's processes hold. Temporal's history then holds no conversation title, URL,
 * lane or reason in clear; search attributes stay readable (Temporal indexes them; they carry ids
 * only). People allowed to read histories decode them through the API's codec endpoint
 * (POST /codec/decode, admin token), the Temporal codec server protocol that the UI and
 * `temporal workflow show --codec-endpoint` speak.
 *
 * Off unless OD_PAYLOAD_KEY_FILE names a key file (32 random bytes, base64). Payloads written
 * without a key stay readable with one: decoding passes anything not encrypted here through.
 */

const ENCODING = 'binary/encrypted';
const te = new TextEncoder();
const td = new TextDecoder();

/** The key file's 32 bytes; refuses anything else, so a typo never means "unencrypted". */
export function readPayloadKey(file: string): Buffer {
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`OD_PAYLOAD_KEY_FILE ${file}: want 32 bytes, base64 (openssl rand -base64 32), got ${key.length}`);
  return key;
}

/** The key's public id, kept beside each payload so a rotated key is told apart from a broken one. */
export const keyIdOf = (key: Buffer): string => createHash('sha256').update(key).digest('hex').slice(0, 16);

export class EncryptionCodec implements PayloadCodec {
  private readonly keyId: string;
  constructor(private readonly key: Buffer) {
    this.keyId = keyIdOf(key);
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    const { temporal } = await import('@temporalio/proto');
    return payloads.map((p) => {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', this.key, iv);
      const plain = temporal.api.common.v1.Payload.encode(p).finish();
      const body = Buffer.concat([cipher.update(plain), cipher.final()]);
      return { metadata: { encoding: te.encode(ENCODING), 'encryption-key-id': te.encode(this.keyId) }, data: Buffer.concat([iv, cipher.getAuthTag(), body]) };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    const { temporal } = await import('@temporalio/proto');
    return payloads.map((p) => {
      if (!p.metadata?.encoding || td.decode(p.metadata.encoding) !== ENCODING) return p;
      const id = p.metadata['encryption-key-id'] ? td.decode(p.metadata['encryption-key-id']) : '';
      if (id !== this.keyId) throw new Error(`payload encrypted with key ${id || 'unknown'}, this process holds ${this.keyId}`);
      const data = Buffer.from(p.data ?? new Uint8Array());
      const decipher = createDecipheriv('aes-256-gcm', this.key, data.subarray(0, 12));
      decipher.setAuthTag(data.subarray(12, 28));
      const plain = Buffer.concat([decipher.update(data.subarray(28)), decipher.final()]);
      return temporal.api.common.v1.Payload.decode(plain) as Payload;
    });
  }
}

/** Where a process finds its keys: the message keyring always, the payload key when configured. */
export interface ConverterKeys {
  payloadKeyFile: string;
  /** OD_SERVICE_KEY_FILE ('' = the default file under dataDir, created when missing) */
  serviceKeyFile: string;
  dataDir: string;
}

/**
 * The data converter of every Temporal client and worker of a process: messages sealed with the
 * service key (src/keys/message-seal.ts), then encrypted when a payload key is configured (decoding
 * runs the other way round: decrypted, then the seal proven).
 */
export function dataConverterOf(cfg: ConverterKeys | { keyring: MessageKeyring; payloadKeyFile: string }): DataConverter {
  const keyring = 'keyring' in cfg ? cfg.keyring : loadKeyring(cfg);
  const codecs: PayloadCodec[] = [new MessageSealCodec(keyring)];
  if (cfg.payloadKeyFile) codecs.push(new EncryptionCodec(readPayloadKey(cfg.payloadKeyFile)));
  return { payloadCodecs: codecs };
}

/** The keyring a data converter proves seals with (dataConverterOf puts it first), or null for a converter without one. */
export function keyringOf(converter: DataConverter): MessageKeyring | null {
  return converter.payloadCodecs?.find((c): c is MessageSealCodec => c instanceof MessageSealCodec)?.keys ?? null;
}
