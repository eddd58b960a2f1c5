// The proxy's TLS certificate: one the team gives (copied in), or a self-signed one made with openssl, whose
// SHA-256 fingerprint people compare (or whose file they pin as the CA) on first connection.
import { X509Certificate } from 'node:crypto';

/** openssl arguments for a self-signed P-256 certificate valid for localhost, 127.0.0.1 and `names`. */
export function selfSignedArgs(certPath: string, keyPath: string, commonName: string, names: readonly string[]): string[] {
  const san = ['DNS:localhost', 'IP:127.0.0.1', ...names.map((n) => (/^[0-9.]+$|:/.test(n) ? `IP:${n}` : `DNS:${n}`))];
  return [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', keyPath, '-out', certPath, '-days', '825',
    '-subj', `/CN=${commonName}`,
    '-addext', `subjectAltName=${[...new Set(san)].join(',')}`,
    // Pinned as its own CA by the clients: it must say it is one.
    '-addext', 'basicConstraints=critical,CA:TRUE',
  ];
}

/** SHA-256 fingerprint as openssl and browsers print it (AA:BB:...). Throws on a file that is not a certificate. */
export function certificateFingerprint(pem: string | Buffer): string {
  return new X509Certificate(pem).fingerprint256;
}
