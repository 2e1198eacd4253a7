"""Files appear complete or not at all: written under a temporary name, renamed at the end, and the
temporary removed on an error, on Ctrl-C (SIGINT) and on SIGTERM."""
import contextlib
import os
import shutil
import signal
import threading


class _Terminated(BaseException):
    pass


def _remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.remove(path)


@contextlib.contextmanager
def temporary_for(path):
    """Yields a temporary path next to `path`; on success the caller's writes are moved to `path`
    (replacing it), otherwise the temporary is removed and the interruption passes on."""
    tmp = f"{path.rstrip('/')}.tmp-{os.getpid()}"
    _remove(tmp)
    main = threading.current_thread() is threading.main_thread()
    previous = None
    if main:
        def on_term(signum, frame):
            raise _Terminated()
        previous = signal.signal(signal.SIGTERM, on_term)
    try:
        yield tmp
        if os.path.isdir(path) and not os.path.islink(path) and os.path.isdir(tmp):
            shutil.rmtree(path)
        os.replace(tmp, path)
    except _Terminated:
        _remove(tmp)
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
        previous = None
        os.kill(os.getpid(), signal.SIGTERM)  # end the way SIGTERM ends this process
        raise
    except BaseException:  # KeyboardInterrupt (SIGINT) included
        _remove(tmp)
        raise
    finally:
        if main and previous is not None:
            signal.signal(signal.SIGTERM, previous)
