-- urls_host served no query (host look-ups read the hosts table) and cost an
-- index entry, on a random leaf, for every URL admitted.
DROP INDEX IF EXISTS urls_host;
