// Parse's PostgreSQL functions for the Add and AddUnique operations pass the
// stored array through SELECT DISTINCT: an Add to ["c","a","b","a"] stored
// ["c","a","b","d"] or ["b","c","a","d"] (duplicates the client saved were
// lost, the order was the hash's), and an AddUnique reordered every element.
// MongoDB keeps both ($push, $addToSet). These definitions, run after Parse's
// own initialization (which defines them at each start), keep the stored array
// as it was and append: every value for Add, for AddUnique each value not
// already there (once). Same names and signatures, so Parse's SQL calls them.
import type { PgDatabase } from '../../parse/internals.js'

const ARRAY_ADD = `CREATE OR REPLACE FUNCTION array_add("array" jsonb, "values" jsonb)
  RETURNS jsonb LANGUAGE sql IMMUTABLE STRICT
AS $function$
  SELECT "array" || "values";
$function$`

// The values not stored yet, each at its first place among the values (jsonb equality, as DISTINCT
// used). An anti-join and a sort of the values only: measured faster than Parse's from 1,000 stored
// elements on (0.3 ms against 2.3 ms), about 25 µs slower for ten.
const ARRAY_ADD_UNIQUE = `CREATE OR REPLACE FUNCTION array_add_unique("array" jsonb, "values" jsonb)
  RETURNS jsonb LANGUAGE sql IMMUTABLE STRICT
AS $function$
  SELECT "array" || COALESCE((
    SELECT jsonb_agg(elt ORDER BY place) FROM (
      SELECT DISTINCT ON (elt) elt, place FROM jsonb_array_elements("values") WITH ORDINALITY AS added(elt, place)
      WHERE NOT EXISTS (SELECT 1 FROM jsonb_array_elements("array") AS stored(elt) WHERE stored.elt = added.elt)
      ORDER BY elt, place
    ) AS firsts
  ), '[]'::jsonb);
$function$`

/** Redefines array_add and array_add_unique to keep the stored array; run after Parse's start. */
export async function keepArrayOrder (database: PgDatabase): Promise<void> {
  await database.tx(async (t) => {
    await t.none(ARRAY_ADD)
    await t.none(ARRAY_ADD_UNIQUE)
  })
}
