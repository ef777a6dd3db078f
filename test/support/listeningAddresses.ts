import { readFileSync } from 'node:fs';

/**
 * The local addresses the kernel has a listening TCP socket on for `port` (Linux: /proc/net/tcp and
 * tcp6), e.g. ['127.0.0.1']. Independent of the code under test, so a server that binds 0.0.0.0 or
 * :: shows up as exactly that.
 */
export function listeningAddresses(port: number): string[] {
  const found: string[] = [];
  for (const [file, decode] of [
    ['/proc/net/tcp', decodeIpv4],
    ['/proc/net/tcp6', decodeIpv6],
  ] as const) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const [hexAddress, hexPort] = (fields[1] ?? '').split(':');
      if (fields[3] !== '0A' || hexAddress === undefined || hexPort === undefined) continue; // 0A: LISTEN
      if (parseInt(hexPort, 16) === port) found.push(decode(hexAddress));
    }
  }
  return found;
}

function decodeIpv4(hex: string): string {
  const bytes = Buffer.from(hex, 'hex');
  return [bytes[3], bytes[2], bytes[1], bytes[0]].join('.');
}

function decodeIpv6(hex: string): string {
  // Four 32-bit words, each in host (little-endian) order.
  const bytes = Buffer.from(hex, 'hex');
  for (let i = 0; i < 16; i += 4) bytes.subarray(i, i + 4).reverse();
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
  const full = groups.join(':');
  if (full === '0:0:0:0:0:0:0:0') return '::';
  if (full === '0:0:0:0:0:0:0:1') return '::1';
  if (full.startsWith('0:0:0:0:0:ffff:')) return `::ffff:${[bytes[12], bytes[13], bytes[14], bytes[15]].join('.')}`;
  return full;
}
