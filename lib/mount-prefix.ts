// The text a path under the mount starts with. The mount is normalised at boot
// ('/parse', or '/' for the server root), and paths are joined as prefix + '/x':
// a root mount is then the empty prefix, never '//x'.
export function mountPrefix (mountPath: string): string {
  return mountPath === '/' ? '' : mountPath
}
