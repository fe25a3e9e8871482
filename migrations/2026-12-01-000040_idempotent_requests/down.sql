DROP TABLE idempotent_requests;
