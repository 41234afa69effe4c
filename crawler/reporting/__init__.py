"""Reading a crawl back: status, export, its history, the HTML report, ground truths."""
