"""The real Celery worker fixture (``celery_worker``) is in ``tests/conftest.py``."""
