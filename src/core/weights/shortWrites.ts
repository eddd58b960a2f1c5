// A vectored write may take fewer bytes than it was given: what is left of the views after `written` of their
// bytes went out, for the next write (the main thread's and the hashing worker's appends go on the same way).
export function unwritten(views: Uint8Array[], written: number): Uint8Array[] {
  let done = 0;
  let n = written;
  while (done < views.length && n >= views[done]!.byteLength) n -= views[done++]!.byteLength;
  const rest = views.slice(done);
  if (n > 0) rest[0] = rest[0]!.subarray(n);
  return rest;
}
