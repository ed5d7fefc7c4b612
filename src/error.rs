//! CLI errors.
