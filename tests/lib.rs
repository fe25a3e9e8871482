//! The black-box suite lives in `it/`; this package has no library code of its own.
