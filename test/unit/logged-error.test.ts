// An error in a log line: what it says and where it came from, never the request it carried (an
// HTTP client's error holds the URL, with a receiver's token in its path, and its headers).
import { expect } from 'chai';
import { AxiosError } from 'axios';
import { loggedError } from '../../src/logging.js';

describe('loggedError', () => {
  it("keeps an HTTP client error's type, message, code and stack, not its request or response", () => {
    const err = new AxiosError('connect ECONNREFUSED 127.0.0.1:9', 'ECONNREFUSED', {
      url: 'http://receiver/hooks/t0ken-in-path',
      headers: { Authorization: 'Bearer t0ken-in-header' },
    } as never);
    const shown = loggedError(err) as Record<string, unknown>;
    expect(shown).to.include({
      type: 'AxiosError',
      message: 'connect ECONNREFUSED 127.0.0.1:9',
      code: 'ECONNREFUSED',
    });
    expect(shown.stack).to.be.a('string');
    expect(JSON.stringify(shown)).not.to.match(/t0ken/);
  });

  it('follows causes a few levels, and leaves what is not an error as it is', () => {
    const inner = new Error('inner');
    const shown = loggedError(new Error('outer', { cause: new Error('middle', { cause: inner }) }));
    expect(shown).to.nested.include({ 'cause.message': 'middle', 'cause.cause.message': 'inner' });
    expect(loggedError('a string')).to.equal('a string');
  });
});
