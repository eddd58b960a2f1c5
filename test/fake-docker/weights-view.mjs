// The weights as the container sees them: a container path maps to a host path through the `-v` mounts (the
// longest target that covers it), and a link inside the weights folder resolves in the container's namespace —
// a Hub cache snapshot's ../../blobs links resolve only when the whole repository folder is mounted.
import { lstatSync, readdirSync, readlinkSync } from 'node:fs';
import { join, posix } from 'node:path';

/** The host path behind a container path, or undefined when no mount covers it. */
export function toHost(containerPath, volumes) {
  const v = volumes
    .filter((m) => containerPath === m.target || containerPath.startsWith(`${m.target}/`))
    .sort((a, b) => b.target.length - a.target.length)[0];
  return v ? join(v.source, containerPath.slice(v.target.length)) : undefined;
}

/** The host folder a rendered config's weights_path names through the mounts (unchanged when none covers it). */
export function hostWeightsPath(configText, volumes) {
  const m = /key: "weights_path" value \{ string_value: "([^"]*)" \}/.exec(configText);
  if (!m) return undefined;
  return toHost(m[1], volumes) ?? m[1];
}

/** Entries of the container's weights folder that it cannot read: links whose target no mount covers. */
export function unreadableInContainer(containerPath, volumes) {
  if (!containerPath) return [];
  const host = toHost(containerPath, volumes);
  if (!host) return [containerPath];
  const bad = [];
  let names = [];
  try { names = readdirSync(host); } catch { return [containerPath]; }
  for (const name of names) {
    let st;
    try { st = lstatSync(join(host, name)); } catch { continue; }
    if (!st.isSymbolicLink()) continue;
    const target = readlinkSync(join(host, name));
    const inContainer = posix.resolve(containerPath, target);
    if (!toHost(inContainer, volumes)) bad.push(name);
  }
  return bad;
}
