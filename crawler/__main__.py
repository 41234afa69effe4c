import sys

from crawler.cli import main

if __name__ == "__main__":  # a worker process imports this module too, and must not run it
    sys.exit(main())
