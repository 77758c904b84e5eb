-- The alert store (docs/console.md): every alert the fan-out delivers to the `store` destination
-- (host/output/destinations/store.ts), one row each, read by the query API
-- (host/api/routes/alerts.ts). `json` is the alert's Falco JSON line exactly as written (its
-- evt.time is an integer of nanoseconds, which a JSON number in JavaScript would round); the
-- other columns are what the filters and counts read, each with its index. Every index but the
-- tags' and the text's ends in time_ns, so a filtered search reads its newest rows first.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE alerts (
  id bigserial PRIMARY KEY,
  time_ns bigint NOT NULL,             -- event time, ns since the epoch
  priority smallint NOT NULL,          -- 0 (Emergency) .. 7 (Debug), Falco's order
  rule text NOT NULL,
  source text NOT NULL,
  hostname text NOT NULL,
  tags text[] NOT NULL,
  output text NOT NULL,                -- the rendered message, without the time/priority prefix
  container_id text,
  container_name text,
  container_image text,
  k8s_pod text,
  k8s_ns text,
  json text NOT NULL
);

CREATE INDEX alerts_time ON alerts (time_ns);
CREATE INDEX alerts_priority ON alerts (priority, time_ns);
CREATE INDEX alerts_rule ON alerts (rule, time_ns);
CREATE INDEX alerts_source ON alerts (source, time_ns);
CREATE INDEX alerts_hostname ON alerts (hostname, time_ns);
CREATE INDEX alerts_container_id ON alerts (container_id, time_ns) WHERE container_id IS NOT NULL;
CREATE INDEX alerts_container_name ON alerts (container_name, time_ns) WHERE container_name IS NOT NULL;
CREATE INDEX alerts_container_image ON alerts (container_image, time_ns) WHERE container_image IS NOT NULL;
CREATE INDEX alerts_k8s_pod ON alerts (k8s_pod, time_ns) WHERE k8s_pod IS NOT NULL;
CREATE INDEX alerts_k8s_ns ON alerts (k8s_ns, time_ns) WHERE k8s_ns IS NOT NULL;
CREATE INDEX alerts_tags ON alerts USING gin (tags);
CREATE INDEX alerts_output ON alerts USING gin (output gin_trgm_ops);
