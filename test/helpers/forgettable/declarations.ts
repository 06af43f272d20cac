// One of each declaration, for test/forget-declarations.test.ts (loaded as a directory, too).
import Parse from 'parse/node'
import { BaseModel, BeforeSave, CloudFunction, Job, ParseClass, ParseField, Route, Transactional } from '../../../lib/index.js'

@ParseClass('Forgettable')
export class Forgettable extends BaseModel {
  @ParseField({ type: 'String' }) declare label: string
  @BeforeSave() static check () {}
}

@ParseClass('_User')
export class Member extends Parse.User {
  @ParseField({ type: 'String' }) declare nickname: string
}

@Route('forgettables')
export class ForgettableFunctions {
  @CloudFunction() forgettableHello () { return 'hello' }
  @Transactional() @CloudFunction() async forgettableWrite () { return 'written' }
  @Job() static forgettableJob () {}
}
