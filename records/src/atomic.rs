//! Atomic file writes: write a temporary file beside the target, fsync, rename.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` so that readers see the old file or the whole new one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = AtomicFile::create(path)?;
    f.write_all(bytes)?;
    f.commit()
}

/// A file written under a temporary name and renamed into place on [`AtomicFile::commit`].
/// Dropped without commit, the temporary file is removed.
pub struct AtomicFile {
    tmp: PathBuf,
    path: PathBuf,
    file: Option<File>,
}

impl AtomicFile {
    pub fn create(path: &Path) -> io::Result<AtomicFile> {
        if let Some(dir) = path.parent() {
            if !dir.as_os_str().is_empty() {
                fs::create_dir_all(dir)?;
            }
        }
        let name = path.file_name().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
        let tmp = path.with_file_name(format!(".{}.{}.tmp", name.to_string_lossy(), std::process::id()));
        let file = File::create(&tmp)?;
        Ok(AtomicFile { tmp, path: path.to_path_buf(), file: Some(file) })
    }

    pub fn commit(mut self) -> io::Result<()> {
        let file = self.file.take().expect("commit once");
        file.sync_all()?;
        drop(file);
        fs::rename(&self.tmp, &self.path)?;
        if let Some(dir) = self.path.parent() {
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.as_mut().expect("not committed").write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.as_mut().expect("not committed").flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.is_some() {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}
