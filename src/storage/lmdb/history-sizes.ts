// How many bytes the embedded store's history holds, known without reading it back.

/** Sizes of recent writes in revision order, so the history's bytes are known without reading it. */
export class HistorySizes {
  private revs: number[] = [];
  private sizes: number[] = [];
  private head = 0;
  bytes = 0;

  push(rev: number, size: number): void {
    this.revs.push(rev);
    this.sizes.push(size);
    this.bytes += size;
  }

  /** Forget the revisions up to `rev` (compacted). */
  dropThrough(rev: number): void {
    while (this.head < this.revs.length && this.revs[this.head] <= rev) this.bytes -= this.sizes[this.head++];
    if (this.head > 1024 && this.head * 2 > this.revs.length) {
      this.revs = this.revs.slice(this.head);
      this.sizes = this.sizes.slice(this.head);
      this.head = 0;
    }
  }

  /** The newest revision whose removal (with all before it) leaves at most `keep` bytes. */
  revisionKeeping(keep: number): number {
    let bytes = this.bytes;
    let target = 0;
    for (let i = this.head; i < this.revs.length && bytes > keep; i++) {
      bytes -= this.sizes[i];
      target = this.revs[i];
    }
    return target;
  }
}
