-- Errors grouped by fingerprint (docs/api.md, "Grouping and users affected"): one group per
-- (project, fingerprint) instead of (project, name, actor, platform), and each event keeps the
-- user it names so a group can count the users affected. Groups stored before this migration
-- keep their old key as their fingerprint ('v1:' and an md5 of it): their new events, which get
-- a frame-based fingerprint, start a new group.

ALTER TABLE error_tracking_errors ADD COLUMN fingerprint text;
UPDATE error_tracking_errors SET fingerprint = 'v1:' || md5(name || E'\n' || actor || E'\n' || platform);
ALTER TABLE error_tracking_errors ALTER COLUMN fingerprint SET NOT NULL;
ALTER TABLE error_tracking_errors DROP CONSTRAINT error_tracking_errors_project_id_name_actor_platform_key;
CREATE UNIQUE INDEX error_tracking_errors_fingerprint ON error_tracking_errors (project_id, fingerprint);

-- "id:<id>", "username:<name>", "email:<address>" or "ip:<address>" from the event's `user`.
ALTER TABLE error_tracking_error_events ADD COLUMN user_key text;
CREATE INDEX error_tracking_error_events_user ON error_tracking_error_events (error_id, user_key) WHERE user_key IS NOT NULL;
