"""The tasks extension on the server: records and store, running calls as tasks, `tasks/*`."""

from .store import TaskRecord, TaskStore

__all__ = ["TaskRecord", "TaskStore"]
