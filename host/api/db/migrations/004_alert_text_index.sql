-- The alert store's free text (docs/console.md, "Free text"): a trigram index that keeps the
-- punctuation. pg_trgm makes trigrams of words, runs of letters and digits, and drops everything
-- else: 003's index on `output` could not tell `pid=0)` from a row holding the word `0` anywhere
-- (`/etc/file-0`), so such a search rechecked every row with that word. Measured over 1,000,000
-- stored alerts: 1,018 ms on PostgreSQL, 1,796 ms on PGlite, where the match itself is rare.
--
-- alert_text_key() lower-cases the text as ILIKE does (lower(), the database's collation) and
-- turns each punctuation character into the letter q, so punctuation joins the words around it
-- and its trigrams are indexed (`pid=0)` -> `pidq0q`). It maps character by character: whenever
-- a needle is a substring of an output, any case, its key is a substring of the output's key, so
-- `output_key LIKE '%' || alert_text_key(needle) || '%'` finds every row `output ILIKE` matches,
-- and the query keeps the ILIKE for the exact answer (host/api/db/alerts.ts). IMMUTABLE, as
-- lower() and regexp_replace() are: a stored column may use it.
--
-- The key is a stored column, computed once per row as it is written: an index on the expression
-- would compute it again for every row a search rechecks (a trigram match is always rechecked),
-- and the function costs microseconds a row.

CREATE FUNCTION alert_text_key(t text) RETURNS text
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $key$ SELECT regexp_replace(lower(t), '[[:punct:]]', 'q', 'g') $key$;

ALTER TABLE alerts ADD COLUMN output_key text GENERATED ALWAYS AS (alert_text_key(output)) STORED;
CREATE INDEX alerts_output_key ON alerts USING gin (output_key gin_trgm_ops);
DROP INDEX alerts_output;
