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

// Each element with where it came from (0 the stored array, 1 the values) and its place; a value is
// kept when it is the first of its kind. jsonb equality and ordering, as DISTINCT used before.
const ARRAY_ADD_UNIQUE = `CREATE OR REPLACE FUNCTION array_add_unique("array" jsonb, "values" jsonb)
  RETURNS jsonb LANGUAGE sql IMMUTABLE STRICT
AS $function$
  SELECT "array" || COALESCE((
    SELECT jsonb_agg(elt ORDER BY place)
    FROM (
      SELECT elt, source, place, row_number() OVER (PARTITION BY elt ORDER BY source, place) AS nth
      FROM (
        SELECT elt, 0 AS source, place FROM jsonb_array_elements("array") WITH ORDINALITY AS stored(elt, place)
        UNION ALL
        SELECT elt, 1 AS source, place FROM jsonb_array_elements("values") WITH ORDINALITY AS added(elt, place)
      ) AS every
    ) AS numbered
    WHERE source = 1 AND nth = 1
  ), '[]'::jsonb);
$function$`

/** Redefines array_add and array_add_unique to keep the stored array; run after Parse's start. */
export async function keepArrayOrder (database: PgDatabase): Promise<void> {
  await database.tx(async (t) => {
    await t.none(ARRAY_ADD)
    await t.none(ARRAY_ADD_UNIQUE)
  })
}
