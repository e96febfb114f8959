// What an image edit form holds once read: its fields and its image files, and the bytes they used.

export interface FormImage {
  field: 'image' | 'mask';
  filename: string;
  contentType: string;
  bytes: Buffer;
}

export interface ImageForm {
  fields: Record<string, unknown>;
  images: FormImage[];
  /** Bytes the request has used so far (files); URL references must fit in what is left. */
  used: number;
}
