-- Sponsors own agents; an agent is identified by the SHA-256 of its bearer key.
CREATE TABLE sponsors (
    id         uuid PRIMARY KEY,
    name       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT sponsors_name_key UNIQUE (name),
    CONSTRAINT sponsors_name_not_blank CHECK (btrim(name) <> '')
);

CREATE TABLE agents (
    id         uuid PRIMARY KEY,
    sponsor_id uuid NOT NULL REFERENCES sponsors (id),
    label      text,
    key_hash   bytea NOT NULL,
    is_active  boolean NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT agents_key_hash_key UNIQUE (key_hash),
    CONSTRAINT agents_key_hash_is_sha256 CHECK (octet_length(key_hash) = 32)
);

CREATE INDEX agents_sponsor_id_idx ON agents (sponsor_id);
CREATE INDEX agents_created_at_id_idx ON agents (created_at, id);
