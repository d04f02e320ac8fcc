-- The OpenTelemetry trace of a run's spans (`sr serve --otlp`): 32 hex
-- digits, set when the run is first claimed with tracing on, kept for every
-- later attempt (one trace per run); NULL for a run never traced.
ALTER TABLE runs ADD COLUMN trace_id TEXT;
