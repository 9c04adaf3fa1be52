//! WAL checkpoints of a projection's database on a thread of their own.
//!
//! A projection writes everything to the write-ahead log first; a checkpoint then copies
//! the committed pages into the database file. Left to SQLite, the checkpoint runs inside
//! the COMMIT that crosses `wal_autocheckpoint`, or when the last connection closes: on
//! the writing thread, while the other cores wait (half a second of a five-second
//! `project summary`, whose one large transaction is all copied at its COMMIT). Here the
//! writer's automatic checkpoints are turned off and, after each commit, a second
//! connection copies what was committed (a PASSIVE checkpoint, which never blocks the
//! writer) while the writer goes on. Checkpoints are part of SQLite's crash safety
//! whichever connection runs them: a crash at any point leaves the last commit.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, SyncSender};
use std::thread::JoinHandle;

use anyhow::{Context, Result, anyhow};
use rusqlite::Connection;

pub struct BackgroundCheckpoints {
    /// The writer's `wal_autocheckpoint`, given back by [`finish`](Self::finish).
    autocheckpoint: i64,
    /// Wakes the thread after a commit; one pending wake-up is enough.
    wake: Option<SyncSender<()>>,
    thread: Option<JoinHandle<Result<()>>>,
}

impl BackgroundCheckpoints {
    /// Starts checkpointing the database `writer` writes (a file database in WAL mode).
    pub fn start(writer: &Connection) -> Result<BackgroundCheckpoints> {
        let path: PathBuf = writer
            .path()
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .ok_or_else(|| anyhow!("background checkpoints need a database file"))?;
        let checkpointer = open_checkpointer(&path)?;
        let autocheckpoint: i64 =
            writer.query_row("PRAGMA wal_autocheckpoint", [], |r| r.get(0))?;
        writer.execute_batch("PRAGMA wal_autocheckpoint = 0;")?;
        let (wake, woken) = mpsc::sync_channel::<()>(1);
        let thread = std::thread::Builder::new()
            .name("checkpoints".to_string())
            .spawn(move || -> Result<()> {
                while woken.recv().is_ok() {
                    checkpointer
                        .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
                        .context("a WAL checkpoint failed")?;
                }
                Ok(())
            })
            .context("cannot start the checkpoint thread")?;
        Ok(BackgroundCheckpoints {
            autocheckpoint,
            wake: Some(wake),
            thread: Some(thread),
        })
    }

    /// Tells the thread a transaction was committed.
    pub fn committed(&self) {
        if let Some(wake) = &self.wake {
            // Full: a checkpoint is already due and will copy this commit too.
            // Disconnected: the thread stopped on an error, which `finish` reports.
            let _ = wake.try_send(());
        }
    }

    /// Waits for the checkpoint under way and gives the writer its automatic checkpoints
    /// back: its own next checkpoint has only the commits made since to copy.
    pub fn finish(mut self, writer: &Connection) -> Result<()> {
        self.stop()?;
        writer.execute_batch(&format!(
            "PRAGMA wal_autocheckpoint = {};",
            self.autocheckpoint
        ))?;
        Ok(())
    }

    fn stop(&mut self) -> Result<()> {
        self.wake = None;
        match self.thread.take() {
            Some(thread) => thread
                .join()
                .map_err(|_| anyhow!("the checkpoint thread panicked"))?,
            None => Ok(()),
        }
    }
}

impl Drop for BackgroundCheckpoints {
    fn drop(&mut self) {
        // On an error path: the writer's connection checkpoints when it is closed.
        let _ = self.stop();
    }
}

fn open_checkpointer(path: &Path) -> Result<Connection> {
    let conn = Connection::open(path)
        .with_context(|| format!("cannot open {} to checkpoint it", path.display()))?;
    // It copies pages from the log to the file: it needs no cache. It waits for a lock held
    // at that moment rather than failing.
    conn.execute_batch("PRAGMA cache_size = -256;")?;
    conn.busy_timeout(std::time::Duration::from_secs(60))?;
    Ok(conn)
}
