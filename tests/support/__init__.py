"""What several test modules share: fixture runs and traces, the hostile payloads, the view
mirror, the file-backend kit, the throwaway PostgreSQL server and the history worker process.

Test modules import them as ``support.<module>``: pytest puts ``tests/`` on ``sys.path`` (it
holds ``conftest.py``), and the kernels some tests start are told the same path.
"""
