//! `.baton.yml`.
