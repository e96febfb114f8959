// Config problems collected across every stage of loading, each as `file:line:col /json/pointer message`, never thrown one by one.
import type { YamlSource } from './yaml-source.js';

export class Problems {
  readonly list: string[] = [];

  /** A problem at `pointer` in `source`; with `key`, placed at that member's key (the pointer's last segment) instead of its value. */
  add(source: YamlSource, pointer: string, message: string, key?: string): void {
    this.list.push(`${source.locate(key !== undefined ? pointer.slice(0, pointer.length - key.length - 1) : pointer, key)} ${pointer || '/'} ${message}`);
  }
}
