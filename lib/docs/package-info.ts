// Defaults for the document's info.license and info.contact: the application's
// package.json (in the working directory), as npm reads it. Nothing is made up:
// a field the package does not have stays out of the document.
import { readFileSync } from 'node:fs'
import path from 'node:path'

export interface License { name: string, url?: string }
export interface Contact { name?: string, url?: string, email?: string }

export interface PackageInfo { license?: License, contact?: Contact }

/** license and author of the package.json in `directory`; {} when there is none or it cannot be read. */
export function packageInfo (directory = process.cwd()): PackageInfo {
  let manifest: Record<string, unknown>
  try {
    manifest = JSON.parse(readFileSync(path.join(directory, 'package.json'), 'utf8')) as Record<string, unknown>
  } catch {
    return {}
  }
  const license = licenseOf(manifest.license)
  const contact = contactOf(manifest.author)
  return { ...(license ? { license } : {}), ...(contact ? { contact } : {}) }
}

/** An SPDX id links to its text; an expression or "SEE LICENSE IN …" is shown as written. */
function licenseOf (value: unknown): License | undefined {
  if (typeof value !== 'string' || value.trim() === '' || value === 'UNLICENSED') return undefined
  const name = value.trim()
  return /^[A-Za-z0-9.+-]+$/.test(name) ? { name, url: `https://spdx.org/licenses/${name}.html` } : { name }
}

/** npm's "Name <email> (url)" text, or its { name, email, url } object. */
function contactOf (value: unknown): Contact | undefined {
  let fields: Contact
  if (typeof value === 'string') {
    const match = /^([^<(]*)(?:<([^>]*)>)?\s*(?:\(([^)]*)\))?/.exec(value.trim())!
    fields = { name: match[1]?.trim(), email: match[2]?.trim(), url: match[3]?.trim() }
  } else if (value && typeof value === 'object') {
    const { name, email, url } = value as Record<string, unknown>
    fields = { name: text(name), email: text(email), url: text(url) }
  } else {
    return undefined
  }
  const contact = Object.fromEntries(Object.entries(fields).filter(([, field]) => typeof field === 'string' && field !== '')) as Contact
  return Object.keys(contact).length > 0 ? contact : undefined
}

function text (value: unknown): string | undefined {
  return typeof value === 'string' ? value.trim() : undefined
}
