// A file's url, as Parse answers it: {mount}/files/{appId}/{name}. Parse takes the
// mount from each request's URL, which comes out wrong with its Express app inside
// Fastify, and has none in-process (the SDK and queryRows inside handlers), where
// urls began "undefined/files/…". The kit's own files adapters build the url from
// the configured address instead: publicServerURL when set (as Parse prefers it),
// else serverURL — one url on every path.

interface FileLocating {
  getFileLocation (config: Record<string, unknown>, filename: string): string | Promise<string>
}

export function locateFilesAtServerURL (adapter: unknown, serverURL: string): void {
  const files = adapter as FileLocating
  const locate = files.getFileLocation.bind(files)
  const base = serverURL.replace(/\/+$/, '')
  files.getFileLocation = (config, filename) => {
    const publicURL = typeof config.publicServerURL === 'string' ? config.publicServerURL.replace(/\/+$/, '') : ''
    // Parse's Config reads `mount` through a getter; this view shadows it for one call.
    const located = Object.create(config, { mount: { value: publicURL || base } }) as Record<string, unknown>
    return locate(located, filename)
  }
}
