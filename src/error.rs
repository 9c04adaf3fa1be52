//! The error of the public API: what went wrong, in a form a program can match on.
//! Inside the crate errors carry context as `anyhow` chains; at the boundary they become
//! one of these kinds, with the whole chain as the message.

use std::fmt;
use std::path::PathBuf;

/// What the public API returns on failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The path holds no store (and the call does not create one).
    #[error("no store at {path}: {message}")]
    NoStore { path: PathBuf, message: String },
    /// Another process is writing the store (one writer at a time).
    #[error("the store {path} is busy: {message}")]
    Busy { path: PathBuf, message: String },
    /// A SHA-1 key in none of the accepted spellings (raw 20 bytes, 40 hex, 32 base32).
    #[error("bad key {0}")]
    BadKey(String),
    /// A capture query the wayback rules refuse (a bad match type, time, filter, …).
    #[error("bad capture query: {0}")]
    BadQuery(String),
    /// Anything else: reading or writing the store or an input, with the chain of what
    /// was being done.
    #[error("{0}")]
    Failed(String),
}

/// The result of the public API.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Classifies an internal error met on the store at `path`.
    pub(crate) fn at_store(path: &std::path::Path, error: anyhow::Error) -> Error {
        let message = format!("{error:#}");
        if crate::store::directory::is_busy_error(&error) {
            Error::Busy {
                path: path.to_path_buf(),
                message,
            }
        } else if crate::store::directory::is_no_store_error(&error) {
            Error::NoStore {
                path: path.to_path_buf(),
                message,
            }
        } else {
            Error::Failed(message)
        }
    }

    /// An internal error with its chain of context.
    pub(crate) fn internal(error: anyhow::Error) -> Error {
        Error::Failed(format!("{error:#}"))
    }

    pub(crate) fn query(error: impl fmt::Display) -> Error {
        Error::BadQuery(error.to_string())
    }
}
